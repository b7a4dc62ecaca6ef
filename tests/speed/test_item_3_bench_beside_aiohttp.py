"""Issue 34 item 3: ``bench/transport.py`` measures each async case right between raw httpx and raw aiohttp, and
takes its ratio to raw aiohttp within that group (not as its ratio to raw httpx over raw aiohttp's from another
group: raw httpx runs at a tenth of raw aiohttp's rate, and its round-to-round noise landed twice in that ratio)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "transport_pairs.py"
HTTPX, AIOHTTP = "raw httpx", "raw aiohttp"


def _aiohttp(name: str) -> str | None:
    return None if name == AIOHTTP else AIOHTTP


@pytest.fixture(scope="module")
def pairs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("transport_pairs", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("transport_pairs", module)
    spec.loader.exec_module(module)
    return module


def test_item_3_each_case_is_measured_between_raw_httpx_and_raw_aiohttp(pairs: ModuleType) -> None:
    paired = pairs.Paired.of([HTTPX, AIOHTTP, "a", "b"], HTTPX, _aiohttp)
    groups = list(paired.pairs(HTTPX, 4))
    assert [name for name, _ in groups] == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert groups[0][1] == (HTTPX, "a", AIOHTTP)
    assert groups[2][1] == (AIOHTTP, "b", HTTPX)  # the sides swapped every other round


def test_item_3_the_ratio_to_raw_aiohttp_is_taken_within_the_group(pairs: ModuleType) -> None:
    paired = pairs.Paired.of([HTTPX, AIOHTTP, "llmplex"], HTTPX, _aiohttp)
    # raw httpx swings 2x from group to group; llmplex is at 0.55x of raw aiohttp in every group
    for httpx_rate, aiohttp_rate in ((1000.0, 10000.0), (500.0, 10000.0), (1000.0, 11000.0)):
        paired.add("llmplex", HTTPX, {HTTPX: httpx_rate, "llmplex": 0.55 * aiohttp_rate, AIOHTTP: aiohttp_rate})
    assert paired.ratio_beside("llmplex") == pytest.approx(0.55)
    assert paired.ratio_beside(AIOHTTP) == 1.0
    assert paired.ratio(AIOHTTP) == pytest.approx(11.0)  # raw aiohttp's ratio to raw httpx: 10, 20, 11 per group
    assert paired.ratio_beside(HTTPX) == pytest.approx(1 / 11)
    assert paired.median(HTTPX) == 1000.0 and len(paired.figures[AIOHTTP]) == 3


def test_item_3_without_a_second_yardstick_the_pairs_are_as_before(pairs: ModuleType) -> None:
    paired = pairs.Paired.of([HTTPX, "a"], HTTPX)
    assert list(paired.pairs(HTTPX, 2)) == [("a", (HTTPX, "a")), ("a", ("a", HTTPX))]
    paired.add("a", HTTPX, {HTTPX: 10.0, "a": 12.0})
    assert paired.ratio("a") == pytest.approx(1.2) and not paired.beside
