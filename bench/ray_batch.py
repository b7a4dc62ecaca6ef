"""``llmplex batch --ray`` (issue 15 item 3): rows per second with 1 and 2 Ray workers, and without Ray.

Run: ``python bench/ray_batch.py`` (or ``tox -e bench``); needs the ``llmplex[ray]``
extra. It starts a local Ray instance (2 CPUs, 127.0.0.1, no dashboard) and the
stub OpenAI server of ``bench/openai_stub_server.py``, writes a requests file of
ROWS rows for the openai plugin pointed at the stub, and times whole
``llmplex batch`` runs (worker start-up included, Ray's own start-up not):
in this process without ``--ray``, then ``--ray --ray-workers 1`` and ``2``,
in turn, ROUNDS times; prints the best rows/s of each as a markdown table.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from openai_overhead import StubServer  # noqa: E402
from smoke import SMOKE, scaled  # noqa: E402

ROWS = scaled(2_000, 40)
ROUNDS = scaled(3)
CONCURRENCY = 32
SETUPS = {"in this process (no Ray)": [], "Ray, 1 worker": ["--ray", "--ray-workers", "1"]}
if not SMOKE:  # a smoke run starts Ray once
    SETUPS["Ray, 2 workers"] = ["--ray", "--ray-workers", "2"]


def run(folder: Path, extra: list[str]) -> float:
    """Seconds of one whole ``llmplex batch`` run over the requests file."""
    from click.testing import CliRunner

    from llmplex.cli.main import cli

    output = folder / "out.jsonl"
    output.unlink(missing_ok=True)
    args = ["--config", str(folder / "llmplex.toml"), "batch", str(folder / "in.jsonl"), "-o", str(output)]
    start = time.perf_counter()
    result = CliRunner().invoke(cli, [*args, "-c", str(CONCURRENCY), "--no-progress", *extra])
    seconds = time.perf_counter() - start
    if result.exit_code != 0:
        raise RuntimeError(f"the batch failed ({result.exit_code}): {result.stderr}")
    return seconds


def main() -> None:
    from tests.support.ray_cluster import start_ray

    stub = StubServer()
    try:
        start_ray()
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / "llmplex.toml").write_text(
                f'disabled = ["recorder", "otel"]\n\n[providers.openai]\nbase_url = "{stub.url}"\n'
                'api_key = "bench-key"\napi = "chat"\n'
            )
            rows = (json.dumps({"model": "openai:gpt-4o-mini", "prompt": f"row {i}"}) for i in range(ROWS))
            (folder / "in.jsonl").write_text("\n".join(rows) + "\n")
            best = dict.fromkeys(SETUPS, float("inf"))
            for _ in range(ROUNDS):
                for name, extra in SETUPS.items():
                    best[name] = min(best[name], run(folder, extra))
    finally:
        stub.stop()
    print(f"\n{ROWS} rows, --concurrency {CONCURRENCY}, best of {ROUNDS} runs; load average {os.getloadavg()[0]:.1f}")
    print("\n| setup | seconds | rows/s |\n|---|---|---|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds:.2f} | {ROWS / seconds:.0f} |")


if __name__ == "__main__":
    main()
