"""Per-call cost of llmplex, the official SDKs and litellm against raw httpx, httpx2 and aiohttp (issue 17).

Run: ``python bench/transport.py [--quick] [--no-litellm] [--no-freeze] [--inflight N ...] [--async-only]
[--profile CASE]`` (about two and a half minutes; ``tox -e bench`` too). One process run, against a local stub
server (``bench/openai_stub_server.py``: each provider's wire format) in its own process; with two CPUs or more the
server runs on CPU 1 and this process on CPU 0.

Sync and async measures run each case right next to its yardstick (the pair's order alternates, the cases'
order rotates each round) for a fixed time each; a case's ratio is the median of its ratios to the yardstick
measured beside it, its figure the median of its measurements. Streaming runs in rotating rounds, ratios taken
within a round:

* sync: µs per short call, sequential; ratio to raw ``httpx.Client`` posting the same JSON to the same API;
* async: requests/s with 64, then 256 in flight in one event loop (``--inflight``); ratio to raw
  ``httpx.AsyncClient`` and to raw aiohttp on a pool the size of the case's client's (the openai and anthropic
  SDKs' 1,000 connections, or aiohttp's default 100), each measured right beside the case (raw httpx on one side,
  raw aiohttp on the other, the sides swapped every other round);
* streaming: time to the first text chunk and µs per further chunk, against raw
  httpx reading the same SSE (``iter_lines`` + ``json.loads``);
* memory: tracemalloc peak of one burst of 64 concurrent calls, per call (KiB).

Goals, printed MET/MISSED: (issue 17) llmplex chat, responses, anthropic sync <= 1.5x, async >= 1.5x; (issue 26)
their streams' first chunk <= 1.2x, per chunk <= 2x; (issue 34) every plugin's sync call <= 1.10x, streams per
chunk <= 1.5x; (issue 34 item 3) llmplex async >= 0.5x raw aiohttp at every in-flight level. Raw aiohttp
reaching the most requests/s shows the server is not the bottleneck.

Once every case is built, the heap is frozen (``gc.freeze()``), as a long-running service does after
start-up (see bench/README.md); ``--no-freeze`` shows the unfrozen figures.

``--profile CASE`` (``"llmplex anthropic"``) runs cProfile over the case, sync then async: own time per package (the
async loop at the first ``--inflight`` level). ``--async-only`` runs the async tables alone.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import transport_cases  # noqa: E402
from smoke import SMOKE, scaled  # noqa: E402
from transport_cases import Async, AsyncStream, Stream, Sync  # noqa: E402
from transport_pairs import AIOHTTP_SDK_POOL, Paired, aiohttp_yardstick, rotations, sync_yardstick  # noqa: E402
from transport_profile import burst, profile  # noqa: E402

INFLIGHT = (scaled(64, 8), scaled(256, 16))  # calls in flight in the async measures (a smoke run: 8, 16)
SYNC_GOAL, ASYNC_GOAL = 1.5, 1.5
AIOHTTP_GOAL = 0.5
AIOHTTP_GOAL_CASES = (
    "llmplex chat",
    "llmplex responses",
    "llmplex anthropic",
    "llmplex openai-compatible",
    "llmplex gemini",
    "llmplex azure",
)
GOAL_CASES = ("llmplex chat", "llmplex responses", "llmplex anthropic")
ITEM_2_GOAL = 1.10  # issue 34 item 2: every plugin path's sync call <= 1.10x raw httpx on its own API
ITEM_2_CASES = (*GOAL_CASES, "llmplex gemini", "llmplex openai-compatible", "llmplex azure")
SYNC_YARDSTICK, ASYNC_YARDSTICK = "raw httpx", "raw httpx"
STREAM_FIRST_GOAL, STREAM_CHUNK_GOAL = 1.2, 2.0
STREAM_GOAL_CASES = ("llmplex chat", "llmplex responses")
LEAN_CHUNK_GOAL = 1.5
LEAN_PROVIDERS = ("anthropic", "openai-compatible", "bedrock", "gemini")
LEAN_GOAL_CASES = (*STREAM_GOAL_CASES, *(f"llmplex {provider}" for provider in LEAN_PROVIDERS))


class Settings:
    """Seconds each case runs per round (``--quick`` divides them) and rounds per measure."""

    def __init__(self, quick: bool) -> None:
        scale = 50 if SMOKE else 4 if quick else 1
        self.sync_rounds, self.sync_seconds = scaled(9), 0.15 / scale
        self.async_rounds, self.async_seconds = scaled(7), 0.35 / scale
        self.stream_rounds, self.stream_seconds = scaled(7), 0.25 / scale


class StubServer:
    """The stub server process, pinned to ``cpu``; stops when this closes its stdin."""

    def __init__(self, cpu: int | None) -> None:
        command = [sys.executable, str(HERE / "openai_stub_server.py"), "--lifetime", "900"]
        if cpu is not None:
            command += ["--cpu", str(cpu)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline().split()
        if line[:1] != ["PORT"]:
            self.stop()
            raise RuntimeError(f"the stub server did not start: {line!r}")
        self.root = f"http://127.0.0.1:{line[1]}"

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=10)


# -- sync ---------------------------------------------------------------------------------


def _sync_figure(call: Sync, seconds: float) -> float:
    calls = 0
    started = time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        for _ in range(10):
            call()
        calls += 10
    return elapsed / calls * 1e6


def sync_rounds(cases: dict[str, Sync], settings: Settings) -> Paired:
    """µs per call of each case, each measured right next to the yardstick."""
    for call in cases.values():  # warm-up: connections open, caches filled
        for _ in range(scaled(20, 2)):
            call()
    paired = Paired.of(list(cases), SYNC_YARDSTICK)
    for name, order in paired.pairs(SYNC_YARDSTICK, settings.sync_rounds):
        own = sync_yardstick(name)  # raw httpx posting the same JSON to the same API
        pair = [own if n == SYNC_YARDSTICK else n for n in order]
        paired.add(name, own, {n: _sync_figure(cases[n], settings.sync_seconds) for n in pair})
    return paired


# -- async --------------------------------------------------------------------------------


async def _async_figure(call: Async, seconds: float, inflight: int) -> float:
    done = 0
    started = time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        await burst(call, inflight, inflight)
        done += inflight
    return done / elapsed


async def async_rounds(
    factories: dict[str, Callable[[], Async]],
    closers: list[Callable[[], Awaitable[object]]],
    settings: Settings,
    inflight: int,
    *,
    memory: bool,
) -> tuple[Paired, dict[str, float]]:
    """Requests/s of each case with ``inflight`` calls in flight, each measured between the yardstick and raw
    aiohttp; with ``memory``, KiB per in-flight call (tracemalloc peak of one burst / ``inflight``)."""
    calls = {name: factory() for name, factory in factories.items()}
    for call in calls.values():  # warm-up: a connection per worker
        await burst(call, inflight, inflight)
    paired = Paired.of(list(calls), ASYNC_YARDSTICK, aiohttp_yardstick)
    for name, group in paired.pairs(ASYNC_YARDSTICK, settings.async_rounds):
        figures = {n: await _async_figure(calls[n], settings.async_seconds, inflight) for n in group}
        paired.add(name, ASYNC_YARDSTICK, figures)
    kib: dict[str, float] = {}
    for name, call in calls.items() if memory else ():
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        await burst(call, inflight, inflight)
        kib[name] = (tracemalloc.get_traced_memory()[1] - before) / inflight / 1024
        tracemalloc.stop()
    for close in closers:
        await close()
    closers.clear()
    return paired, kib


# -- streaming ----------------------------------------------------------------------------


def stream_rounds(cases: dict[str, Stream], settings: Settings) -> dict[str, tuple[list[float], list[float]]]:
    """Per round: median µs to the first chunk, and median µs per further chunk, of each case."""
    for stream in cases.values():
        for _ in range(3):
            sum(1 for _ in stream())
    figures: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in cases}
    for order in rotations(list(cases), settings.stream_rounds):
        for name in order:
            firsts, per_chunk = [], []
            begun = time.perf_counter()
            while time.perf_counter() - begun < settings.stream_seconds:
                started = time.perf_counter()
                chunks = cases[name]()
                next(chunks)
                first = time.perf_counter()
                rest = sum(1 for _ in chunks)
                firsts.append(first - started)
                per_chunk.append((time.perf_counter() - first) / max(rest, 1))
            figures[name][0].append(statistics.median(firsts) * 1e6)
            figures[name][1].append(statistics.median(per_chunk) * 1e6)
    return figures


async def astream_rounds(
    factories: dict[str, Callable[[], AsyncStream]],
    closers: list[Callable[[], Awaitable[object]]],
    settings: Settings,
) -> dict[str, tuple[list[float], list[float]]]:
    """Async twin of ``stream_rounds``: one stream at a time in one event loop."""
    streams = {name: factory() for name, factory in factories.items()}
    for stream in streams.values():
        for _ in range(3):
            async for _chunk in stream():
                pass
    figures: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in streams}
    for order in rotations(list(streams), settings.stream_rounds):
        for name in order:
            firsts, per_chunk = [], []
            begun = time.perf_counter()
            while time.perf_counter() - begun < settings.stream_seconds:
                started = time.perf_counter()
                chunks = aiter(streams[name]())
                await anext(chunks)
                first = time.perf_counter()
                rest = 0
                async for _chunk in chunks:
                    rest += 1
                firsts.append(first - started)
                per_chunk.append((time.perf_counter() - first) / max(rest, 1))
            figures[name][0].append(statistics.median(firsts) * 1e6)
            figures[name][1].append(statistics.median(per_chunk) * 1e6)
    for close in closers:
        await close()
    closers.clear()
    return figures


# -- report -------------------------------------------------------------------------------


def _print_table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    print(f"\n{title}")
    print(f"  {'case':<26}" + "".join(f"{c:>14}" for c in columns))
    for name, *cells in rows:
        print(f"  {name:<26}" + "".join(f"{c:>14}" for c in cells))


StreamFigures = dict[str, tuple[list[float], list[float]]]


def _yardstick(name: str, raw_prefix: str) -> str:
    if own := next((wire for wire in ("bedrock", "gemini") if wire in name), None):  # their own wire formats
        return f"{raw_prefix}{own})"
    if "anthropic" in name or "messages" in name:
        return f"{raw_prefix}messages)"
    return f"{raw_prefix}responses)" if "responses" in name else f"{raw_prefix}chat)"


def _stream_ratios(streams: StreamFigures, raw_prefix: str) -> dict[str, tuple[float, float]]:
    """Each case's median ratio to its yardstick measured in the same round: first chunk, per chunk."""
    ratios = {}
    for name, (firsts, chunks) in streams.items():
        raw = streams[_yardstick(name, raw_prefix)]
        first_ratio = statistics.median(a / b for a, b in zip(firsts, raw[0], strict=True))
        chunk_ratio = statistics.median(a / b for a, b in zip(chunks, raw[1], strict=True))
        ratios[name] = first_ratio, chunk_ratio
    return ratios


def _stream_rows(streams: StreamFigures, raw_prefix: str) -> list[tuple[str, ...]]:
    ratios = _stream_ratios(streams, raw_prefix)
    return [
        (
            name,
            f"{statistics.median(firsts):.0f}",
            f"{ratios[name][0]:.2f}x",
            f"{statistics.median(chunks):.1f}",
            f"{ratios[name][1]:.2f}x",
        )
        for name, (firsts, chunks) in streams.items()
    ]


def _stream_goals(streams: StreamFigures, raw: str, kind: str, cases: tuple[str, ...], chunk_goal: float) -> list[str]:
    """Streams of ``cases``: first chunk <= 1.2x and per chunk <= ``chunk_goal`` raw httpx (issue 26: the openai
    plugin's, 2x; issue 34: every provider's, 1.5x)."""
    ratios = _stream_ratios(streams, raw)
    goals = []
    for name in cases:
        if name in ratios:
            first, chunk = ratios[name]
            met = first <= STREAM_FIRST_GOAL and chunk <= chunk_goal
            goals.append(
                f"{name:<26} {kind} first {first:.2f}x <= {STREAM_FIRST_GOAL}x, per chunk {chunk:.2f}x <= "
                f"{chunk_goal}x: {'MET' if met else 'MISSED'}"
            )
    return goals


def _pool(second: str | None) -> str:
    """The pool of the raw aiohttp a row is measured beside: ``(1k)`` for the SDKs' 1,000 connections."""
    return "(1k)" if second == AIOHTTP_SDK_POOL else "    "


AsyncTables = dict[int, tuple[Paired, dict[str, float]]]
"""Per in-flight level: the paired requests/s, and KiB per in-flight call (the first level only)."""


def _async_tables(tables: AsyncTables) -> list[str]:
    """Print one async table per in-flight level; return the issue 34 item 3 goal lines."""
    goals = []
    for inflight, (paired, memory) in tables.items():
        aiohttp = bool(paired.beside)
        rows = [
            (
                n,
                f"{paired.median(n):.0f}",
                f"{paired.ratio(n):.2f}x",
                f"{paired.ratio_beside(n):.2f}x {_pool(paired.seconds.get(n))}" if aiohttp else "-",
                f"{memory[n]:.1f}" if n in memory else "-",
            )
            for n in paired.figures
        ]
        columns = ("requests/s", "vs httpx", "vs aiohttp", "KiB/in-flight")
        _print_table(f"async, {inflight} in flight", columns, rows)
        fastest = max(paired.figures, key=paired.median)
        print(f"  fastest: {fastest} (raw aiohttp on top means the server is not the bottleneck)")
        print("  vs aiohttp: beside raw aiohttp on a pool the size of the case's client's; (1k): the SDKs' 1,000")
        for name in AIOHTTP_GOAL_CASES if aiohttp else ():
            if name in paired.figures:
                ratio = paired.ratio_beside(name)
                met = "MET" if ratio >= AIOHTTP_GOAL else "MISSED"
                goals.append(
                    f"{name:<26} {inflight:>3} in flight {ratio:.2f}x {paired.seconds[name]} >= {AIOHTTP_GOAL}x: {met}"
                )
    return goals


def report(sync: Paired, asynchronous: AsyncTables, streams: StreamFigures, astreams: StreamFigures) -> list[str]:
    """Print the tables; return the goal lines."""
    rows = [(n, f"{sync.median(n):.0f}", f"{sync.ratio(n):.2f}x") for n in sync.figures]
    rounds = len(sync.ratios[GOAL_CASES[0]]) if GOAL_CASES[0] in sync.ratios else 0
    _print_table(f"sync, one short call (medians; {rounds} pairs per case)", ("µs/call", "vs raw"), rows)
    aiohttp = _async_tables(asynchronous)
    _stream_tables(streams, astreams)
    first = asynchronous[min(asynchronous)][0]
    goals = []
    for name in GOAL_CASES:
        if name in sync.figures:
            ratio = sync.ratio(name)
            goals.append(f"{name:<20} sync {ratio:.2f}x <= {SYNC_GOAL}x: {'MET' if ratio <= SYNC_GOAL else 'MISSED'}")
        if name in first.figures:
            ratio = first.ratio(name)
            goals.append(
                f"{name:<20} async {ratio:.2f}x >= {ASYNC_GOAL}x: {'MET' if ratio >= ASYNC_GOAL else 'MISSED'}"
            )
    _print_goals("issue 17", goals)
    item2 = [(n, sync.ratio(n)) for n in ITEM_2_CASES if n in sync.figures]
    item2_lines = [
        f"{n:<26} sync {r:.2f}x <= {ITEM_2_GOAL}x: {'MET' if r <= ITEM_2_GOAL else 'MISSED'}" for n, r in item2
    ]
    _print_goals("issue 34 item 2: sync on every plugin path, vs raw httpx on its API", item2_lines)
    streaming = _stream_report_goals(streams, astreams)
    _print_goals("issue 34 item 3: async >= 0.5x raw aiohttp", aiohttp)
    return goals + item2_lines + streaming + aiohttp


def _stream_tables(streams: StreamFigures, astreams: StreamFigures) -> None:
    columns = ("first µs", "vs raw", "µs/chunk", "vs raw")
    _print_table("streaming (vs raw httpx reading the same SSE)", columns, _stream_rows(streams, "raw httpx SSE ("))
    rows = _stream_rows(astreams, "raw httpx SSE (async ")
    _print_table("async streaming, one at a time (vs raw httpx.AsyncClient reading the same SSE)", columns, rows)


def _stream_report_goals(streams: StreamFigures, astreams: StreamFigures) -> list[str]:
    """Print the stream goals of issues 26 and 34; return their lines."""
    streaming: list[str] = []
    lean: list[str] = []
    for figures, raw, kind in ((streams, "raw httpx SSE (", "stream"), (astreams, "raw httpx SSE (async ", "astream")):
        streaming += _stream_goals(figures, raw, kind, STREAM_GOAL_CASES, STREAM_CHUNK_GOAL)
        lean += _stream_goals(figures, raw, kind, LEAN_GOAL_CASES, LEAN_CHUNK_GOAL)
    _print_goals("issue 26", streaming)
    _print_goals("issue 34: lean streams everywhere", lean)
    return streaming + lean


def _print_goals(title: str, lines: list[str]) -> None:
    print(f"\ngoals ({title})" + "".join(f"\n  {line}" for line in lines))


def _pin() -> tuple[int | None, str]:
    """Pin this process to CPU 0 and give the server CPU 1, when there are two CPUs to use."""
    if not hasattr(os, "sched_setaffinity"):
        return None, "not pinned (no sched_setaffinity)"
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None, "not pinned (one CPU)"
    os.sched_setaffinity(0, {cpus[0]})
    return cpus[1], f"client on CPU {cpus[0]}, server on CPU {cpus[1]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a quarter of the calls (a smoke run)")
    parser.add_argument("--no-litellm", action="store_true", help="leave litellm out (its import is slow)")
    parser.add_argument("--profile", metavar="CASE", help="profile this case instead of benchmarking")
    parser.add_argument(
        "--no-freeze", action="store_true", help="leave the imported modules' objects to the cyclic GC (see README)"
    )
    parser.add_argument(
        "--inflight", metavar="N", type=int, nargs="+", default=list(INFLIGHT), help="calls in flight per async table"
    )
    parser.add_argument("--async-only", action="store_true", help="only the async tables (no sync, no streams)")
    parser.add_argument("--streams-only", action="store_true", help="only the stream tables (sync and async)")
    args = parser.parse_args()
    settings = Settings(args.quick)
    server_cpu, pinning = _pin()
    server = StubServer(server_cpu)
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory() as folder:
            transport_cases.configure_llmplex(server.root, Path(folder))
            cases = transport_cases.build(server.root, litellm=not args.no_litellm)
            frozen = "no" if args.no_freeze else "yes"
            if not args.no_freeze:  # as a long-running service would: full collections skip what imports built
                gc.collect()
                gc.freeze()
            if args.profile:
                profile(cases, args.profile, args.inflight[0])
                return 0
            print(f"transport benchmark: {pinning}; heap frozen after imports: {frozen}; load {os.getloadavg()[0]:.2f}")
            observers = transport_cases.event_observers()
            print(f"llmplex event observers: {observers} (an active one makes every call build and deliver its events)")
            skip_sync = args.async_only or args.streams_only
            sync = Paired.of([], SYNC_YARDSTICK) if skip_sync else sync_rounds(cases.sync, settings)
            asynchronous = {
                inflight: asyncio.run(
                    async_rounds(
                        cases.asynchronous, cases.aclosers, settings, inflight, memory=inflight == args.inflight[0]
                    )
                )
                for inflight in ([] if args.streams_only else args.inflight)
            }
            streams: StreamFigures = {} if args.async_only else stream_rounds(cases.streams, settings)
            astreams: StreamFigures = {}
            if not args.async_only:
                astreams = asyncio.run(astream_rounds(cases.astreams, cases.aclosers, settings))
            for close in cases.closers:
                close()
    finally:
        server.stop()
    if args.async_only:
        _print_goals("issue 34 item 3: async >= 0.5x raw aiohttp", _async_tables(asynchronous))
    elif args.streams_only:
        _stream_tables(streams, astreams)
        _stream_report_goals(streams, astreams)
    else:
        report(sync, asynchronous, streams, astreams)
    print(f"\n({time.perf_counter() - started:.0f} s; load {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
