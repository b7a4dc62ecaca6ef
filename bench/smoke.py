"""Smoke runs of the benchmarks: with ``BENCH_SMOKE=1`` every script shrinks its counts to a few calls, so
it runs end to end in seconds. The test suite does that for each script (tests/shipping/test_item_1_bench_smoke.py)
so the benchmarks cannot rot; the figures of such a run mean nothing. ``tox -e bench`` runs them in full.
"""

from __future__ import annotations

import os

SMOKE = os.environ.get("BENCH_SMOKE", "") == "1"


def scaled(full: int, smoke: int = 1) -> int:
    """``full`` in a real run, ``smoke`` in a smoke run."""
    return smoke if SMOKE else full
