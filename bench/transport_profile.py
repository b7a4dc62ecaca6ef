"""``bench/transport.py --profile CASE``: cProfile of one case, sync then async, as own time per package (time spent
waiting on sockets, the selector and locks left out of the shares); and the async burst every async measure runs."""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import re

from transport_cases import Async, Cases

__all__ = ["burst", "profile"]


async def burst(call: Async, total: int, inflight: int) -> None:
    """``total`` calls of ``call``, ``inflight`` at a time."""
    remaining = iter(range(total))

    async def worker() -> None:
        for _ in remaining:
            await call()

    await asyncio.gather(*(worker() for _ in range(inflight)))


_GROUPS = (
    *((marker, "core: deadline guard") for marker in ("/llmplex/reliability/guard", "/llmplex/engine/bridge")),
    ("/llmplex/types/", "core: types (Request, Response)"),
    ("/llmplex/", "core: the rest"),
    ("/httpx_aiohttp/", "httpx-aiohttp (the SDKs' aiohttp transport)"),
    *((marker, "aiohttp, multidict, yarl") for marker in ("/aiohttp/", "/multidict/", "/yarl/")),
    ("/anthropic/", "anthropic SDK"),
    ("/google/genai/", "google-genai SDK"),
    ("/openai/", "openai SDK"),
    ("/pydantic", "pydantic"),
    ("/pluggy/", "pluggy"),
    ("/httpx2/", "httpx2"),
    ("/httpx/", "httpx"),
    ("/httpcore", "httpcore"),
    ("/h11/", "h11"),
    ("/json/", "json"),
    ("/asyncio/", "asyncio"),
    *((marker, "threads (worker hand-off)") for marker in ("/threading.py", "/concurrent/")),
    ("/orjson", "orjson"),
)


_WAITS = ("recv", "poll", "select", "acquire", "sleep")
"""Built-ins that wait (on the socket, a lock, the event loop's selector): time not spent computing."""


def _group(filename: str, function: str) -> str:
    if filename == "~" and any(wait in function for wait in _WAITS):
        return "waiting (socket, selector, locks)"
    if plugin := re.search(r"/(llmplex_\w+)/", filename):
        return f"plugin {plugin[1]}"
    return next((group for marker, group in _GROUPS if marker in filename), "other (stdlib, C, ...)")


def _report_profile(profiler: cProfile.Profile, calls: int, title: str) -> None:
    stats = pstats.Stats(profiler)
    groups: dict[str, float] = {}
    for (filename, _, function), (_, _, own, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        group = _group(filename, function)
        groups[group] = groups.get(group, 0.0) + own
    waiting = groups.pop("waiting (socket, selector, locks)", 0.0)
    working = sum(groups.values())
    print(f"\n{title}: own time per package, µs/call under cProfile ({calls} calls)")
    print(f"  {'waiting (socket, selector, locks)':<34} {waiting / calls * 1e6:8.1f}  (left out of the shares)")
    for name, own in sorted(groups.items(), key=lambda item: -item[1]):
        print(f"  {name:<34} {own / calls * 1e6:8.1f}  ({own / working:5.1%})")
    stats.sort_stats("tottime").print_stats(18)


def profile(cases: Cases, name: str, inflight: int, calls: int = 2000) -> None:
    """cProfile of ``calls`` sync calls and of ``calls`` async calls (``inflight`` in flight) of case ``name``."""
    call = cases.sync[name]
    for _ in range(100):
        call()
    profiler = cProfile.Profile()
    profiler.runcall(lambda: [call() for _ in range(calls)])
    _report_profile(profiler, calls, f"{name}, sync")
    if name not in cases.asynchronous:
        return

    async def run() -> None:
        acall = cases.asynchronous[name]()
        await burst(acall, 200, inflight)
        profiler.enable()
        await burst(acall, calls, inflight)
        profiler.disable()

    profiler = cProfile.Profile()
    asyncio.run(run())
    _report_profile(profiler, calls, f"{name}, async with {inflight} in flight")
