"""How much of LiteLLM's import `llmplex` avoids, and proof that it stays out until a `litellm:` request.

Run: `python bench/litellm_import.py`. Each measurement is a fresh interpreter;
times are medians. It prints:

* `import llmplex` alone, and `import llmplex` in a process that already
  imported LiteLLM (what llmplex itself costs either way);
* `import litellm` alone: the cost a user of other prefixes never pays;
* whether `litellm` is in `sys.modules` after `import llmplex`, after a `mock:`
  call, after resolving a `litellm:` model and after `llmplex providers`
  (all must be "no"), and after the first `litellm:` request (must be "yes"),
  with that first request's wall time.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import textwrap

from smoke import scaled

RUNS = scaled(5)
ENV_SETUP = "import os; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')\n"


def run(code: str) -> str:
    """Run ``code`` in a fresh interpreter and return its last stdout line."""
    done = subprocess.run([sys.executable, "-c", ENV_SETUP + code], capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1]


def median_ms(code: str, runs: int = RUNS) -> float:
    """Median of the milliseconds ``code`` prints over ``runs`` fresh interpreters."""
    return statistics.median(float(run(code)) for _ in range(runs))


def timed(statement: str) -> str:
    return textwrap.dedent(
        f"""
        import time
        t = time.perf_counter()
        {statement}
        print((time.perf_counter() - t) * 1000)
        """
    )


# `import litellm`, then `import llmplex` in the same interpreter: both times from one run (litellm's import is
# the slow part of every measurement here; one import serves both)
LITELLM_THEN_LLMPLEX = textwrap.dedent(
    """
    import json, time
    t = time.perf_counter()
    import litellm
    u = time.perf_counter()
    import llmplex
    print(json.dumps([(u - t) * 1000, (time.perf_counter() - u) * 1000]))
    """
)


PRESENCE = textwrap.dedent(
    """
    import json, sys, time
    import llmplex
    from click.testing import CliRunner
    from llmplex.cli.main import cli
    seen = []
    seen.append(("import llmplex", "litellm" in sys.modules))
    client = llmplex.Client(throttle={"max_attempts": 1})
    client.complete("mock:echo", "hi")
    seen.append(("a mock: call", "litellm" in sys.modules))
    client.route("litellm:openai/gpt-4o-mini")
    seen.append(("resolving litellm:openai/gpt-4o-mini", "litellm" in sys.modules))
    CliRunner().invoke(cli, ["providers"])
    seen.append(("llmplex providers", "litellm" in sys.modules))
    t = time.perf_counter()
    client.complete("litellm:openai/gpt-4o-mini", "hi", provider_options={"mock_response": "ok"})
    first = (time.perf_counter() - t) * 1000
    seen.append((f"the first litellm: request ({first:.0f} ms, LiteLLM's import included)", "litellm" in sys.modules))
    print(json.dumps(seen))
    """
)


def main() -> None:
    """Print the measurements."""
    alone = median_ms(timed("import llmplex"))
    pairs = [json.loads(run(LITELLM_THEN_LLMPLEX)) for _ in range(RUNS)]
    litellm_ms, after_litellm = (statistics.median(times) for times in zip(*pairs, strict=True))
    print(f"import llmplex                          {alone:9.1f} ms")
    print(f"import llmplex (litellm already loaded) {after_litellm:9.1f} ms")
    print(f"import litellm (never paid by llmplex)  {litellm_ms:9.1f} ms  ({litellm_ms / alone:.0f}x import llmplex)")
    print()
    print("litellm in sys.modules after ...")
    for label, present in json.loads(run(PRESENCE)):
        print(f"  {label:<75} {'yes' if present else 'no'}")


if __name__ == "__main__":
    main()
