"""llmplex + the openai plugin versus the raw openai SDK, against a local stub server.

Run: ``python bench/openai_overhead.py [--profile]``. The stub
(``bench/openai_stub_server.py``) runs in its own process; ``local:`` is a config
instance of the openai plugin (``api = "chat"``, ``base_url`` at the stub).

* sync: sequential ``llmplex.complete("local:stub-model", ...)`` versus
  ``OpenAI(...).chat.completions.create(...)``, alternating call by call; median
  wall time and CPU time per call. Target: latency ratio <= 1.05.
* async: ``llmplex.acomplete`` versus ``AsyncOpenAI`` at concurrency 64, in one
  event loop; median throughput and CPU per call. Target: throughput ratio >= 0.95.

* in situ: llmplex's time minus the HTTP call it made (``transport.send_chat``), call by call (median):
  its own work amid real calls, with cold caches; split into the plugin's
  format + parse and core's rest.
* own work: the same call in-process with the HTTP round trip replaced by a
  ready answer, the decoded JSON the transport returns (best of rounds): what the plugin (format + parse)
  and core (the rest of the pipeline) add per call, immune to network noise.

``--profile`` adds a cProfile of that own work: split between core, the
plugin, pydantic and pluggy, then the costliest functions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from smoke import scaled

SYNC_CALLS = scaled(3_000, 30)
SYNC_WARMUP = scaled(200, 5)
ASYNC_CALLS = scaled(1_000, 64)
ASYNC_ROUNDS = scaled(5)
CONCURRENCY = 64
TARGET_LATENCY_RATIO = 1.05
TARGET_THROUGHPUT_RATIO = 0.95
MODEL = "stub-model"
PROMPT = "Say hello."
HERE = Path(__file__).resolve().parent


class StubServer:
    """The stub server process; stops when this closes its stdin."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "openai_stub_server.py"), "--lifetime", "900"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().split()
        if line[:1] != ["PORT"]:
            self.stop()
            raise RuntimeError(f"the stub server did not start: {line!r}")
        self.url = f"http://127.0.0.1:{line[1]}/v1"

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=10)


def configure_llmplex(url: str, folder: Path) -> None:
    """Point the default client at a config whose ``local:`` is the stub (no observer plugins)."""
    config = folder / "llmplex.toml"
    config.write_text(
        f'disabled = ["recorder", "otel"]\n\n[providers.local]\nplugin = "openai"\nbase_url = "{url}"\napi = "chat"\n'
    )
    os.environ["LLMPLEX_CONFIG"] = str(config)


def timed(run: Callable[[int], None], calls: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) per call of ``run(calls)``."""
    wall, cpu = time.perf_counter(), time.process_time()
    run(calls)
    return (time.perf_counter() - wall) / calls, (time.process_time() - cpu) / calls


class Stopwatch:
    """Wraps ``module.name`` while installed; ``seconds`` collects each call's wall time."""

    def __init__(self, module: Any, name: str) -> None:
        self.module, self.name = module, name
        self.original = getattr(module, name)
        self.seconds: list[float] = []

    def __enter__(self) -> Stopwatch:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return self.original(*args, **kwargs)
            finally:
                self.seconds.append(time.perf_counter() - start)

        setattr(self.module, self.name, timed)
        return self

    def __exit__(self, *exc: object) -> None:
        setattr(self.module, self.name, self.original)


def sync_figures(url: str) -> dict[str, float]:
    """Median seconds per call, the two callers alternating call by call (order swapped each pair).

    Besides wall and CPU time of each caller: llmplex's own work in situ (its time
    minus the SDK call it made, call by call), and the plugin's part of it
    (format + parse); core's part is the rest.
    """
    import openai
    from llmplex_openai import chat, transport

    import llmplex

    raw = openai.OpenAI(base_url=url, api_key="bench", max_retries=0)
    messages = [{"role": "user", "content": PROMPT}]

    def raw_sdk() -> object:
        return raw.chat.completions.create(model=MODEL, messages=messages)  # type: ignore[arg-type]

    def via_llmplex() -> object:
        return llmplex.complete(f"local:{MODEL}", PROMPT)

    callers = {"raw": raw_sdk, "llmplex": via_llmplex}
    wall: dict[str, list[float]] = {"raw": [], "llmplex": []}
    cpu: dict[str, list[float]] = {"raw": [], "llmplex": []}
    with (
        Stopwatch(transport, "send_chat") as sdk,
        Stopwatch(chat, "format_chat_request") as formats,
        Stopwatch(chat, "parse_chat_response") as parses,
    ):
        for pair in range(SYNC_WARMUP + SYNC_CALLS):
            for name in ("raw", "llmplex") if pair % 2 else ("llmplex", "raw"):
                started, cpu_started = time.perf_counter(), time.process_time()
                callers[name]()
                wall[name].append(time.perf_counter() - started)
                cpu[name].append(time.process_time() - cpu_started)
    raw.close()
    keep = slice(SYNC_WARMUP, None)
    own = [total - sent for total, sent in zip(wall["llmplex"][keep], sdk.seconds[keep], strict=True)]
    plugin = [f + p for f, p in zip(formats.seconds[keep], parses.seconds[keep], strict=True)]
    return {
        "raw_wall": statistics.median(wall["raw"][keep]),
        "raw_cpu": statistics.median(cpu["raw"][keep]),
        "llmplex_wall": statistics.median(wall["llmplex"][keep]),
        "llmplex_cpu": statistics.median(cpu["llmplex"][keep]),
        "own": statistics.median(own),
        "plugin": statistics.median(plugin),
    }


async def _concurrently(call: Callable[[], Awaitable[object]], total: int) -> None:
    remaining = iter(range(total))

    async def worker() -> None:
        for _ in remaining:
            await call()

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))


async def _async_rounds(url: str) -> dict[str, tuple[float, float]]:
    import openai

    import llmplex

    raw = openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0)
    messages = [{"role": "user", "content": PROMPT}]

    def raw_sdk() -> Awaitable[object]:
        return raw.chat.completions.create(model=MODEL, messages=messages)  # type: ignore[arg-type]

    def via_llmplex() -> Awaitable[object]:
        return llmplex.acomplete(f"local:{MODEL}", PROMPT)

    for call in (raw_sdk, via_llmplex):
        await _concurrently(call, 200)
    samples: dict[str, list[tuple[float, float]]] = {"raw": [], "llmplex": []}
    for _ in range(ASYNC_ROUNDS):
        for name, call in (("raw", raw_sdk), ("llmplex", via_llmplex)):
            wall, cpu = time.perf_counter(), time.process_time()
            await _concurrently(call, ASYNC_CALLS)
            samples[name].append(
                (ASYNC_CALLS / (time.perf_counter() - wall), (time.process_time() - cpu) / ASYNC_CALLS)
            )
    await raw.close()
    return {name: _medians(values) for name, values in samples.items()}


def own_work_figures() -> dict[str, float]:
    """µs per call of llmplex's own work with the SDK call replaced by a ready answer (best of rounds)."""
    from llmplex_openai import chat
    from openai.types.chat import ChatCompletion
    from openai_stub_server import CHAT_COMPLETION

    import llmplex
    from llmplex.engine.request_builder import build_request

    answer = ChatCompletion.model_validate(CHAT_COMPLETION)
    request = build_request(MODEL, PROMPT)

    def plugin_only(n: int) -> None:
        for _ in range(n):
            chat.format_chat_request(request, max_tokens_key="max_tokens")
            chat.parse_chat_response(answer, request)

    def pipeline(n: int) -> None:
        for _ in range(n):
            llmplex.complete(f"local:{MODEL}", PROMPT)

    with _ready_answer():
        pipeline(200)
        return {"plugin": _best_us(plugin_only), "pipeline": _best_us(pipeline)}


@contextlib.contextmanager
def _ready_answer() -> Iterator[None]:
    """Replace the plugin's HTTP call with a ready ``ChatCompletion`` (what the SDK would return)."""
    from llmplex_openai import transport
    from openai.types.chat import ChatCompletion
    from openai_stub_server import CHAT_COMPLETION

    answer = ChatCompletion.model_validate(CHAT_COMPLETION)
    real_send = transport.send_chat
    transport.send_chat = lambda client, payload, timeout: answer
    try:
        yield
    finally:
        transport.send_chat = real_send


def _best_us(run: Callable[[int], None], calls: int = scaled(3_000, 30), rounds: int = scaled(5)) -> float:
    return min(timed(run, calls)[0] for _ in range(rounds)) * 1e6


def _medians(values: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)


def profile_llmplex(calls: int = 5_000) -> None:
    """Print where llmplex's own work goes (HTTP round trip replaced by a ready answer): by group, then by function."""
    import llmplex

    with _ready_answer():
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            llmplex.complete(f"local:{MODEL}", PROMPT)
        profiler.disable()
    stats = pstats.Stats(profiler)
    groups = dict.fromkeys(["core (llmplex)", "plugin (llmplex_openai)", "pydantic", "pluggy", "other"], 0.0)
    for (filename, _, _), (_, _, own, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        groups[_group(filename)] += own
    total = sum(groups.values())
    print(
        f"\nprofile of {calls} llmplex.complete calls without the HTTP round trip (own time, µs/call under cProfile):"
    )
    for name, own in groups.items():
        print(f"  {name:<26} {own / calls * 1e6:8.1f}  ({own / total:5.1%})")
    print("\nfunctions by own time (core, plugin, pydantic, pluggy):")
    stats.sort_stats("tottime").print_stats(r"llmplex|pydantic|pluggy", 30)


def _group(filename: str) -> str:
    for marker, name in (
        ("/llmplex_openai/", "plugin (llmplex_openai)"),
        ("/llmplex/", "core (llmplex)"),
        ("/pydantic", "pydantic"),
        ("/pluggy/", "pluggy"),
    ):
        if marker in filename:
            return name
    return "other"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="also profile the llmplex sync loop")
    args = parser.parse_args()
    server = StubServer()
    try:
        with tempfile.TemporaryDirectory() as folder:
            configure_llmplex(server.url, Path(folder))
            sync = sync_figures(server.url)
            asynchronous = asyncio.run(_async_rounds(server.url))
            own = own_work_figures()
            if args.profile:
                profile_llmplex()
    finally:
        server.stop()

    raw_wall, raw_cpu, plex_wall, plex_cpu = (sync[k] for k in ("raw_wall", "raw_cpu", "llmplex_wall", "llmplex_cpu"))
    (raw_rate, raw_acpu), (plex_rate, plex_acpu) = asynchronous["raw"], asynchronous["llmplex"]
    latency_ratio, throughput_ratio = plex_wall / raw_wall, plex_rate / raw_rate
    print(f"{'sync sequential (median per call)':<38} {'raw SDK':>10} {'llmplex':>10} {'ratio':>8}")
    print(f"{'  latency µs/call':<38} {raw_wall * 1e6:10.1f} {plex_wall * 1e6:10.1f} {latency_ratio:8.3f}")
    print(f"{'  CPU µs/call':<38} {raw_cpu * 1e6:10.1f} {plex_cpu * 1e6:10.1f} {plex_cpu / raw_cpu:8.3f}")
    print(f"{'  llmplex adds µs/call':<38} {'':>10} {(plex_wall - raw_wall) * 1e6:10.1f}")
    print(f"{'  own work in situ (minus SDK call)':<38} {'':>10} {sync['own'] * 1e6:10.1f}")
    print(f"{'    of which plugin (format + parse)':<38} {'':>10} {sync['plugin'] * 1e6:10.1f}")
    print(f"{'    of which core (the rest)':<38} {'':>10} {(sync['own'] - sync['plugin']) * 1e6:10.1f}")
    print(f"{f'async, concurrency {CONCURRENCY}':<38} {'raw SDK':>10} {'llmplex':>10} {'ratio':>8}")
    print(f"{'  throughput calls/s':<38} {raw_rate:10.0f} {plex_rate:10.0f} {throughput_ratio:8.3f}")
    print(f"{'  CPU µs/call':<38} {raw_acpu * 1e6:10.1f} {plex_acpu * 1e6:10.1f} {plex_acpu / raw_acpu:8.3f}")
    plugin, core = own["plugin"], own["pipeline"] - own["plugin"]
    print("own work, no network (best of rounds)      µs/call")
    print(f"{'  plugin: format + parse':<38} {plugin:10.1f}")
    print(f"{'  core: the rest of the pipeline':<38} {core:10.1f}")
    print(f"{'  expected latency ratio':<38} {(raw_wall * 1e6 + plugin + core) / (raw_wall * 1e6):10.3f}")
    met = latency_ratio <= TARGET_LATENCY_RATIO and throughput_ratio >= TARGET_THROUGHPUT_RATIO
    print(
        f"\ntargets: latency ratio <= {TARGET_LATENCY_RATIO} ({latency_ratio:.3f}), "
        f"async throughput ratio >= {TARGET_THROUGHPUT_RATIO} ({throughput_ratio:.3f}): {'MET' if met else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
