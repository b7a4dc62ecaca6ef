"""Core overhead: per-call pipeline cost on the mock provider, and `import llmplex` time.

Run: `python bench/core_overhead.py` (or `tox -e bench`). Prints a table.

* pipeline: a whole `Client.complete` / `acomplete` / `stream` on `mock:echo`,
  minus the mock plugin's own format+call+parse work measured in the same run,
  is what core adds per call (target: <= 30 µs).
* import: median wall time of `python -c "import llmplex"` minus
  `python -c "pass"` over several runs (target: <= 40 ms), and a check that no
  provider SDK, no plugin and no pydantic was imported.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from smoke import scaled

CALLS = scaled(20_000, 200)
ROUNDS = scaled(5)
IMPORT_RUNS = scaled(15, 2)
TARGET_PIPELINE_US = 30.0
TARGET_IMPORT_MS = 40.0


def per_call_us(run: Callable[[int], None], calls: int = CALLS) -> float:
    """Best-of-ROUNDS microseconds per call of ``run(calls)``."""
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        run(calls)
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def pipeline_figures() -> dict[str, float]:
    import llmplex
    from llmplex.providers import mock

    client = llmplex.Client(disabled=["recorder"])  # no test observer plugins in the measurement
    client.complete("mock:echo", "warm up")
    backend = client.provider_client("mock")
    request = client.router.resolve("mock:echo")
    from llmplex.engine.request_builder import build_request

    built = build_request(request.model, "hello world")

    def plugin_only(n: int) -> None:
        for _ in range(n):
            mock.llmplex_parse(mock.llmplex_call(mock.llmplex_format(built), backend, None))
        backend.calls.clear()

    def sync_complete(n: int) -> None:
        for _ in range(n):
            client.complete("mock:echo", "hello world")
        backend.calls.clear()

    def stream(n: int) -> None:
        for _ in range(n):
            for _event in client.stream("mock:echo", "hello world"):
                pass
        backend.calls.clear()

    def async_complete(n: int) -> None:
        async def main() -> None:
            for _ in range(n):
                await client.acomplete("mock:echo", "hello world")

        asyncio.run(main())
        backend.calls.clear()

    return {
        "mock plugin alone (format+call+parse)": per_call_us(plugin_only),
        "complete (sync)": per_call_us(sync_complete),
        "acomplete (async)": per_call_us(async_complete),
        "stream (sync, 2 words)": per_call_us(stream, CALLS // 4),
    }


def import_figures() -> tuple[float, float, list[str]]:
    def median_ms(code: str) -> float:
        samples = []
        for _ in range(IMPORT_RUNS):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            samples.append((time.perf_counter() - start) * 1e3)
        return statistics.median(samples)

    # Bytecode first, as ``pip install`` writes it for a wheel: with PYTHONDONTWRITEBYTECODE set (some CI images set
    # it) an editable checkout would be compiled from source on every import, which is not what users run.
    compiled = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", "import llmplex"], check=True, env=compiled)
    bare = median_ms("pass")
    with_llmplex = median_ms("import llmplex")
    heavy = ("pydantic", "openai", "anthropic", "google.genai", "litellm", "llmplex_openai", "llmplex.client")
    probe = f"import sys, llmplex; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    return bare, with_llmplex, [m for m in loaded.split(",") if m]


def main() -> int:
    figures = pipeline_figures()
    plugin = figures["mock plugin alone (format+call+parse)"]
    print(f"{'measure':<40} {'µs/call':>10} {'core adds':>10}")
    for name, value in figures.items():
        added = "" if value is plugin else f"{value - plugin:10.1f}"
        print(f"{name:<40} {value:10.1f} {added:>10}")
    bare, with_llmplex, loaded = import_figures()
    print(f"\n{'import':<40} {'ms':>10}")
    print(f"{'python -c pass (median)':<40} {bare:10.1f}")
    print(f"{'python -c import-llmplex (median)':<40} {with_llmplex:10.1f}")
    print(f"{'import llmplex above bare interpreter':<40} {with_llmplex - bare:10.1f}")
    print(f"heavy modules loaded by `import llmplex`: {loaded or 'none'}")
    core_adds = figures["complete (sync)"] - plugin
    ok = core_adds <= TARGET_PIPELINE_US and with_llmplex - bare <= TARGET_IMPORT_MS and not loaded
    print(
        f"\ntargets: pipeline <= {TARGET_PIPELINE_US:.0f} µs (sync: {core_adds:.1f}), "
        f"import <= {TARGET_IMPORT_MS:.0f} ms ({with_llmplex - bare:.1f}), nothing heavy imported: "
        f"{'MET' if ok else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
