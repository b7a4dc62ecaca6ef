"""Issue 33 item 6: bench/routing.py runs end to end as a smoke (its full run is a benchmark, not a test)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_item_6_the_routing_benchmark_runs_as_a_smoke() -> None:
    env = {**os.environ, "BENCH_SMOKE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    command = [sys.executable, str(ROOT / "bench" / "routing.py"), "--no-litellm", "--strategies", "weighted,latency"]
    command += ["--hedge-reserve", "0.5"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    rows = [line for line in done.stdout.splitlines() if line.startswith("| llmplex |")]
    assert len(rows) == 6  # two strategies, each without a hedge, with one, and with one and a reserve of 0.5
    assert sum("| 300ms, reserve 0.5 |" in row or "| 100ms, reserve 0.5 |" in row for row in rows) == 2
    assert all("| 100.0 % |" in row for row in rows), rows  # every call answered: a healthy deployment was left
