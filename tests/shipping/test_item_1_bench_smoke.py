"""Issue 30 item 1: benchmarks are not tests, but each one keeps a smoke run in the suite so it cannot rot.

``tox -e bench`` (outside the default list) runs every script in full; here each runs end to end with
``BENCH_SMOKE=1`` (bench/smoke.py: a few calls per measure) and must exit 0 and print its table.
Figures, not speed: nothing here asserts how fast anything is. bench/gateway.py's smoke run is
tests/gateway/test_item_7_bench.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# script, its arguments, a line its report must print
SCRIPTS = [
    ("core_overhead.py", [], "import llmplex above bare interpreter"),
    ("transport.py", ["--no-litellm"], "llmplex event observers"),
    ("openai_overhead.py", [], "llmplex"),
    ("litellm_import.py", [], "import litellm (never paid by llmplex)"),
    ("local_model_quality.py", ["gemma3-270m"], "| gemma3-270m |"),
    ("local_agent.py", [], "| gemma3-270m | 1 | 512 |"),
    ("local_embedding_quality.py", [], "| llamacpp:all-minilm-l6-v2 |"),
    ("shared_limiter.py", [], "redis"),
]


@pytest.mark.parametrize(("script", "arguments", "expected"), SCRIPTS, ids=[s[0] for s in SCRIPTS])
def test_item_1_each_benchmark_runs_as_a_smoke(script: str, arguments: list[str], expected: str) -> None:
    _smoke(script, arguments, expected, {})


def test_item_1_the_ray_batch_benchmark_runs_as_a_smoke_on_the_suites_ray(ray_address: str) -> None:
    """bench/ray_batch.py joins the suite's Ray (tests/conftest.py) instead of starting its own."""
    from tests.support.ray_cluster import JOIN_VARIABLE

    _smoke("ray_batch.py", [], "rows, --concurrency", {JOIN_VARIABLE: ray_address})


def _smoke(script: str, arguments: list[str], expected: str, extra_env: dict[str, str]) -> None:
    env = {**os.environ, "BENCH_SMOKE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True", **extra_env}
    command = [sys.executable, str(ROOT / "bench" / script), *arguments]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert expected in done.stdout, f"{script} printed no {expected!r}:\n{done.stdout[-3000:]}"


def test_item_1_every_benchmark_script_has_a_smoke_run() -> None:
    helpers = {"smoke.py", "transport_cases.py", "gateway_servers.py", "openai_stub_server.py", "gc_census.py"}
    helpers |= {"routing_fakes.py", "transport_profile.py", "transport_pairs.py", "bare_proxy.py"}
    # ray_batch.py: its own test above; gateway.py: tests/gateway/test_item_7_bench.py; routing.py: tests/groups
    covered = {script for script, _, _ in SCRIPTS} | {"ray_batch.py", "gateway.py", "routing.py"}
    scripts = {path.name for path in (ROOT / "bench").glob("*.py")} - helpers
    assert scripts <= covered, f"benchmarks without a smoke run here: {sorted(scripts - covered)}"
