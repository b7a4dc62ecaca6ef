"""Issue 22 item 7: ``bench/gateway.py --quick`` runs end to end (the stub, ``llmplex serve``, the litellm proxy)
and reports every figure. Figures, not speed: nothing here asserts how fast anything is."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "gateway.py"
ROW_FIGURES = ("p50_1", "p99_1", "p50_64", "p99_64", "rps_64", "rps_256", "ttfb")
ADDED = ("added_p50_1", "added_p99_1", "added_p50_64", "added_p99_64", "added_ttfb")
VARIANTS = (
    "llmplex serve: uvloop, httptools, 1 worker",
    "uvicorn: asyncio, h11, 1 worker",
    "llmplex serve --workers 2",
)


def test_item_7_bench_runs_quick(tmp_path: Path) -> None:
    report_file = tmp_path / "report.json"
    command = [sys.executable, str(BENCH), "--quick", "--soak", "64", "--json", str(report_file)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, (
        f"bench/gateway.py --quick failed (if the litellm proxy is missing: run 'bash tools/ensure_services.sh', "
        f"which installs litellm[proxy] in a venv of its own):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    )
    report = json.loads(report_file.read_text())

    assert set(report["targets"]) == {"direct", "llmplex", "bare", "litellm"}
    for name, row in report["targets"].items():
        for figure in ROW_FIGURES:
            assert row[figure] > 0 and math.isfinite(row[figure]), (name, figure, row[figure])
            assert len(row["rounds"][figure]) == 1, (name, figure)  # --quick: one round
        for figure in ADDED:
            assert math.isfinite(row[figure]), (name, figure)
        assert row["p99_1"] >= row["p50_1"] and row["p99_64"] >= row["p50_64"], (name, row)
    assert all(row["added_p50_1"] == 0 for name, row in report["targets"].items() if name == "direct")
    assert report["rps_64_vs_litellm"] > 0
    assert report["litellm_rss_kib"] > 0 and report["litellm_start_seconds"] > 0
    assert len(report["round_loads"]) == 1 and float(report["round_loads"][0]) >= 0

    above = report["above_bare"]  # the gateway's figures over the floor's (bench/bare_proxy.py)
    assert set(above) == {"added_p50_1", "cpu_64", "added_ttfb"} and all(math.isfinite(v) for v in above.values())
    assert 0 <= report["own_overhead"]["p50"] <= report["own_overhead"]["p99"]
    soak = report["soak"]
    assert soak["requests"] == 64 and soak["rss_after_warmup_kib"] > 10_000 and soak["rss_after_soak_kib"] > 10_000
    assert math.isclose(soak["growth"], soak["rss_after_soak_kib"] / soak["rss_after_warmup_kib"] - 1)

    configs = report["server_configs"]["results"]
    assert set(configs) == set(VARIANTS)
    for name, figures in configs.items():
        assert all(len(values) == 1 and values[0] > 0 for values in figures.values()), (name, figures)

    printed = done.stdout
    for line in (
        "added p50 at 1 in flight",
        "added p99 at 1 in flight",
        "litellm proxy's",
        "own time",
        "the floor (bare",
        "RSS",
        "server settings",
    ):
        assert line in printed, (line, printed)
    assert printed.count(": MET") + printed.count(": MISSED") + printed.count(", MET") + printed.count(", MISSED") == 6
