"""The shared limiter (issue 15): its cost per call, its throughput across processes, its accuracy.

Run: ``python bench/shared_limiter.py`` (or ``tox -e bench``); it starts its own
redis-server (``apt-get install redis-server``) and the stub OpenAI server of
``bench/openai_stub_server.py``, both on 127.0.0.1. Prints markdown tables.

* overhead: microseconds the limiter adds to one ``Client.complete`` on the mock
  provider (no network): the same call with ``rate_limit`` (and
  ``token_rate_limit``) set, minus without; best of rounds; ``memory://`` and
  Redis, sync and async.
* throughput: 1, 4 and 16 worker processes (the shared-limits tests' workers,
  sync, one call at a time each) calling the stub through the openai plugin with
  ``rate_limit`` on Redis: requests per second with a limit that never binds (the
  ceiling of this machine with the limiter) and with ``100/second`` (after the
  first window's burst of 100: the sustained rate).
* accuracy: in the ``100/second`` runs, the most admissions (``RequestStarted``
  events, every process's together) in any 1-second window, against the limit;
  the same for ``memory://`` (a per-process limit) as the control.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from openai_overhead import StubServer  # noqa: E402
from smoke import SMOKE, scaled  # noqa: E402

from tests.scaling.harness import Outcome, openai_config, run_workers, worst_window  # noqa: E402
from tests.support.redis_server import RedisServer  # noqa: E402

CALLS = scaled(1_000, 20)
ROUNDS = scaled(7)
PROCESSES = (1, 4, 16) if not SMOKE else (2,)
MEMORY_PROCESSES = scaled(4, 2)  # the binding run on per-process memory:// windows
BINDING = 100  # requests per second in the binding runs
BINDING_SECONDS = scaled(3)  # how long the binding runs last, at the limit
FREE_CALLS = scaled(1_600, 40)  # calls in all, shared by the processes, in the runs with a limit that never binds


def per_call_us(run: Callable[[int], None]) -> float:
    """Microseconds per call of ``run(CALLS)``."""
    start = time.perf_counter()
    run(CALLS)
    return (time.perf_counter() - start) / CALLS * 1e6


def overhead(redis_url: str) -> list[tuple[str, str, float, float]]:
    """(storage, limits, sync µs/call added, async µs/call added): best of ROUNDS with and without the
    limits, the two measured in turn so that a busy machine slows both alike."""
    import llmplex
    from llmplex.reliability.storage import _memory, store_for

    def client(storage: str, limits: dict[str, Any]) -> llmplex.Client:
        config = {"providers": {"mock": dict(limits)}, "limits": {"storage": storage}, "disabled": ["recorder"]}
        made = llmplex.Client(config)
        made.complete("mock:echo", "warm up", max_tokens=5)
        return made

    def runs(made: llmplex.Client) -> tuple[Callable[[int], None], Callable[[int], None]]:
        backend = made.provider_client("mock")

        def sync(n: int) -> None:
            for _ in range(n):
                made.complete("mock:echo", "hello world", max_tokens=5)
            backend.calls.clear()

        def asynchronous(n: int) -> None:
            async def main() -> None:
                for _ in range(n):
                    await made.acomplete("mock:echo", "hello world", max_tokens=5)

            asyncio.run(main())
            backend.calls.clear()

        return sync, asynchronous

    base = runs(client("memory://", {}))
    rows = []
    many = "100000000/hour"
    for storage in ("memory://", redis_url):
        for label, limits in (
            ("rate_limit", {"rate_limit": many}),
            ("rate_limit + token_rate_limit", {"rate_limit": many, "token_rate_limit": "1000000000/hour"}),
        ):
            made = client(storage, limits)
            reset = _memory().reset if storage == "memory://" else store_for(made.config.limits).storage().reset
            limited = runs(made)
            added = []
            for plain, with_limits in zip(base, limited, strict=True):
                best_plain = best_limited = float("inf")
                for _ in range(ROUNDS):
                    reset()  # each round starts with empty windows
                    best_limited = min(best_limited, per_call_us(with_limits))
                    best_plain = min(best_plain, per_call_us(plain))
                added.append(best_limited - best_plain)
            shown = "memory://" if storage == "memory://" else "redis://127.0.0.1"
            rows.append((shown, label, added[0], added[1]))
    return rows


def jobs(config: dict[str, Any], processes: int, requests: int) -> list[dict[str, Any]]:
    job = {"config": config, "mode": "sync", "requests": requests, "prompt": "Say hello.", "timeout": None}
    return [dict(job) for _ in range(processes)]


def rate(outcome: Outcome, limit: int | None) -> float:
    """Requests per second: answers from the first call's start to the last call's end, or, under a
    binding limit, admissions after the first window's burst per second after the first admission."""
    if limit is not None:
        admitted = outcome.admitted
        return (len(admitted) - limit) / (admitted[-1] - admitted[0])
    began = min(r["started"] for r in outcome.results)
    ended = max(r["ended"] for r in outcome.results)
    return outcome.answered / (ended - began)


def across_processes(stub_url: str, redis_url: str, redis: RedisServer, folder: Path) -> list[tuple[Any, ...]]:
    """(processes, storage, limit, requests/s, worst 1 s window of admissions)."""
    rows: list[tuple[Any, ...]] = []
    runs = [(n, redis_url, "100000000/hour", FREE_CALLS // n) for n in PROCESSES]
    runs += [(n, redis_url, f"{BINDING}/second", BINDING * BINDING_SECONDS // n) for n in PROCESSES]
    runs += [(MEMORY_PROCESSES, "memory://", f"{BINDING}/second", BINDING * BINDING_SECONDS // MEMORY_PROCESSES)]
    for processes, storage, limit, requests in runs:
        redis.flush()
        config = openai_config(stub_url, storage, rate_limit=limit, api="chat")
        config["disabled"] = ["recorder"]
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            outcome = run_workers(Path(tmp), jobs(config, processes, requests))
        assert outcome.answered == len(outcome.results), outcome.errors()
        shown = "memory://" if storage == "memory://" else "redis"
        binding = BINDING if limit.endswith("/second") else None
        rows.append((processes, shown, limit, rate(outcome, binding), worst_window(outcome.admitted, 1.0)))
    return rows


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, RedisServer(Path(folder) / "redis") as redis:
        stub = StubServer()
        try:
            cost = overhead(redis.url)
            spread = across_processes(stub.url, redis.url, redis, Path(folder))
        finally:
            stub.stop()
    print("Limiter overhead per call (mock provider, no network; best of rounds)\n")
    print("| storage | limits | sync µs/call | async µs/call |")
    print("|---|---|---|---|")
    for storage, label, sync, asynchronous in cost:
        print(f"| {storage} | {label} | {sync:.0f} | {asynchronous:.0f} |")
    print("\nRequests through the shared limiter (sync workers against the local stub server; under a binding")
    print("limit, the rate after the first window's burst)\n")
    print("| processes | storage | rate_limit | requests/s | worst 1 s window of admissions |")
    print("|---|---|---|---|---|")
    for processes, storage, limit, per_second, worst in spread:
        window = f"{worst} (limit {BINDING})" if limit.endswith("/second") else f"{worst} (no limit reached)"
        print(f"| {processes} | {storage} | `{limit}` | {per_second:.0f} | {window} |")


if __name__ == "__main__":
    main()
