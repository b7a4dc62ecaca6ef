"""Issue 34 item 3: in ``bench/transport.py`` each async case is measured beside raw aiohttp on a pool the size of
its own client's. The openai and anthropic SDKs' aiohttp clients allow 1,000 connections, so at 256 in flight they
put every call on the wire; raw aiohttp on its default pool of 100 keeps 156 of them waiting for a connection. The
llmplex cases on those clients are measured beside ``raw aiohttp (SDKs' pool)``; llmplex-gemini (httpx-aiohttp's
100), the raw clients and litellm beside ``raw aiohttp``; and raw aiohttp on the SDKs' pool beside raw aiohttp, so
the table shows what the pool alone changes."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
HTTPX = "raw httpx"


def _load(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pairs() -> ModuleType:
    return _load("transport_pairs")


def test_item_3_each_case_has_the_raw_aiohttp_of_its_own_clients_pool(pairs: ModuleType) -> None:
    sdk_pool, default_pool = pairs.AIOHTTP_SDK_POOL, pairs.AIOHTTP
    for name in [f"llmplex {api}" for api in ("chat", "responses", "anthropic", "openai-compatible", "azure")]:
        assert pairs.aiohttp_yardstick(name) == sdk_pool, name
    assert pairs.aiohttp_yardstick("openai SDK chat") == sdk_pool
    for name in ("llmplex gemini", "raw httpx", "raw httpx2", "litellm", sdk_pool):
        assert pairs.aiohttp_yardstick(name) == default_pool, name
    assert pairs.aiohttp_yardstick(default_pool) is None


def test_item_3_the_bench_builds_raw_aiohttp_on_both_pools(pairs: ModuleType) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        cases_module = _load("transport_cases")
    finally:
        sys.path.remove(str(BENCH))
    cases = cases_module.Cases({}, {}, {}, {}, [], [])
    cases_module._yardsticks("http://127.0.0.1:9", cases)

    async def pools() -> dict[str, int]:
        limits = {}
        for name in (pairs.AIOHTTP, pairs.AIOHTTP_SDK_POOL):
            cases.asynchronous[name]()
            limits[name] = cases.aclosers[-1].__self__.connector.limit  # the session the case posts on
        for close in cases.aclosers:
            await close()
        return limits

    assert asyncio.run(pools()) == {pairs.AIOHTTP: 100, pairs.AIOHTTP_SDK_POOL: 1000}
    for close in cases.closers:
        close()


def test_item_3_a_case_is_measured_beside_its_own_pools_aiohttp(pairs: ModuleType) -> None:
    sdk_pool, default_pool = pairs.AIOHTTP_SDK_POOL, pairs.AIOHTTP
    names = [HTTPX, default_pool, sdk_pool, "llmplex chat", "llmplex gemini"]
    paired = pairs.Paired.of(names, HTTPX, pairs.aiohttp_yardstick)
    groups = dict(paired.pairs(HTTPX, 1))
    assert groups == {
        sdk_pool: (HTTPX, sdk_pool, default_pool),  # the pool alone, beside aiohttp's default
        "llmplex chat": (HTTPX, "llmplex chat", sdk_pool),
        "llmplex gemini": (HTTPX, "llmplex gemini", default_pool),
    }
    paired.add("llmplex chat", HTTPX, {HTTPX: 1000.0, "llmplex chat": 5000.0, sdk_pool: 9000.0})
    paired.add("llmplex gemini", HTTPX, {HTTPX: 1000.0, "llmplex gemini": 6000.0, default_pool: 10000.0})
    paired.add(sdk_pool, HTTPX, {HTTPX: 1000.0, sdk_pool: 9000.0, default_pool: 10000.0})
    assert paired.ratio_beside("llmplex chat") == pytest.approx(5 / 9)
    assert paired.ratio_beside("llmplex gemini") == pytest.approx(0.6)
    assert paired.ratio_beside(sdk_pool) == pytest.approx(0.9)
    assert paired.ratio_beside(default_pool) == 1.0
    assert paired.ratio_beside(HTTPX) == pytest.approx(0.1)  # raw httpx beside aiohttp's default pool only
    assert paired.figures[sdk_pool] == [9000.0, 9000.0]  # as a second yardstick and as a case of its own
