"""Model groups (issue 33) beside litellm's Router, on the same three local fake deployments in one run.

Run: ``python bench/routing.py`` (``--requests``, ``--concurrency``, ``--no-litellm``, ``--hedge-reserve``).
The deployments (bench/routing_fakes.py, a process of their own) are one that fails 30 % of requests, one
whose first byte takes 5 s on 20 % of requests, and one that answers 429 past its rpm (300 a minute, which
both routers are told). Each router runs ``--requests`` chat calls at ``--concurrency`` in flight, once per
strategy, llmplex with and without a 300 ms hedge (its group's default ``hedge_reserve``; each
``--hedge-reserve`` share adds a hedged run with it); the deployments' counts are reset before each run.

Prints a markdown table: success rate, p50/p99 latency, requests per second, CPU (this process: the
router's own work) per request, and the requests each deployment received.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from smoke import SMOKE, scaled  # noqa: E402

NAMES = ("flaky", "slow", "limited")
RPM = scaled(300, 1000)
SLOW_SECONDS = 5.0 if not SMOKE else 0.5
HEDGE = "300ms" if not SMOKE else "100ms"
STRATEGIES = {  # llmplex strategy -> litellm's matching routing_strategy
    "weighted": "simple-shuffle",
    "least-busy": "least-busy",
    "latency": "latency-based-routing",
    "headroom": "usage-based-routing-v2",
}
MESSAGES = [{"role": "user", "content": "Say ok"}]


@dataclass
class Run:
    """One router's run: what each call took and whether it answered, the CPU it used, the counts."""

    router: str
    strategy: str
    hedge: str
    latencies: list[float]
    failures: int
    seconds: float
    cpu: float
    received: dict[str, int]

    def row(self) -> str:
        done = len(self.latencies) + self.failures
        ordered = sorted(self.latencies) or [float("nan")]
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        split = " / ".join(str(self.received.get(name, 0)) for name in NAMES)
        return (
            f"| {self.router} | {self.strategy} | {self.hedge} | {100 * len(self.latencies) / done:.1f} % "
            f"| {statistics.median(ordered) * 1000:.0f} | {p99 * 1000:.0f} | {done / self.seconds:.0f} "
            f"| {self.cpu / done * 1000:.2f} | {split} |"
        )


class Fakes:
    """The fake deployments' process."""

    def __init__(self) -> None:
        command = [
            sys.executable,
            str(HERE / "routing_fakes.py"),
            "--slow-seconds",
            str(SLOW_SECONDS),
            "--rpm",
            str(RPM),
        ]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.ports: dict[str, int] = json.loads(self.process.stdout.readline())

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}"

    def reset(self) -> None:
        for name in NAMES:
            urllib.request.urlopen(urllib.request.Request(self.url(name) + "/reset", method="POST"), timeout=10).read()

    def received(self) -> dict[str, int]:
        return {
            name: json.loads(urllib.request.urlopen(self.url(name) + "/stats", timeout=10).read()).get("received", 0)
            for name in NAMES
        }

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(10)


Measured = tuple[list[float], int, float, float]


async def drive(call: Callable[[], Awaitable[Any]], requests: int, concurrency: int) -> Measured:
    """``requests`` calls, ``concurrency`` at a time: latencies of the answers, failures, wall and CPU seconds."""
    latencies: list[float] = []
    failures = 0
    left = iter(range(requests))

    async def worker() -> None:
        nonlocal failures
        for _ in left:
            began = time.perf_counter()
            try:
                await call()
            except Exception:
                failures += 1
            else:
                latencies.append(time.perf_counter() - began)

    began, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies, failures, time.perf_counter() - began, time.process_time() - cpu


def llmplex_run(
    fakes: Fakes, strategy: str, hedge: str | None, requests: int, concurrency: int, reserve: float | None = None
) -> Run:
    import llmplex

    providers = {
        name: {"plugin": "openai", "base_url": fakes.url(name) + "/v1", "api": "chat", "api_key": "sk-bench"}
        for name in NAMES
    }
    deployments: list[dict[str, Any]] = [{"model": f"{name}:gpt-4o-mini"} for name in NAMES]
    deployments[2]["rpm"] = RPM
    group: dict[str, Any] = {"strategy": strategy, "cooldown": "5s", "allowed_fails": 3, "deployments": deployments}
    if hedge:
        group["hedge"] = hedge
    if reserve is not None:
        group["hedge_reserve"] = reserve
    client = llmplex.Client(providers=providers, groups={"chat": group}, timeout=30, throttle={"max_attempts": 3})

    async def run() -> Measured:
        for name in NAMES:  # load the plugin and its SDK before the clock starts (a failure does that too)
            with contextlib.suppress(llmplex.LLMError):
                await client.acomplete(f"{name}:gpt-4o-mini", MESSAGES)
        fakes.reset()
        try:
            return await drive(lambda: client.acomplete("chat", MESSAGES), requests, concurrency)
        finally:
            await client.aclose()

    latencies, failures, seconds, cpu = asyncio.run(run())
    label = (hedge or "-") if reserve is None else f"{hedge}, reserve {reserve:g}"
    return Run("llmplex", strategy, label, latencies, failures, seconds, cpu, fakes.received())


def litellm_run(fakes: Fakes, strategy: str, requests: int, concurrency: int) -> Run:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm
    from litellm import Router

    litellm.suppress_debug_info = True
    model_list = []
    for name in NAMES:
        params: dict[str, Any] = {
            "model": "openai/gpt-4o-mini",
            "api_base": fakes.url(name) + "/v1",
            "api_key": "sk-bench",
        }
        if name == "limited":
            params["rpm"] = RPM
        model_list.append({"model_name": "chat", "litellm_params": params})
    router = Router(
        model_list=model_list,
        routing_strategy=STRATEGIES[strategy],
        num_retries=2,
        allowed_fails=3,
        cooldown_time=5,
        timeout=30,
    )

    async def run() -> Measured:
        for _ in NAMES:
            with contextlib.suppress(Exception):
                await router.acompletion(model="chat", messages=MESSAGES)
        fakes.reset()
        return await drive(lambda: router.acompletion(model="chat", messages=MESSAGES), requests, concurrency)

    latencies, failures, seconds, cpu = asyncio.run(run())
    return Run("litellm Router", STRATEGIES[strategy], "-", latencies, failures, seconds, cpu, fakes.received())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=scaled(1000, 12))
    parser.add_argument("--concurrency", type=int, default=scaled(64, 4))
    parser.add_argument("--no-litellm", action="store_true", help="only llmplex (litellm imports in seconds)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES) if not SMOKE else "weighted")
    parser.add_argument(
        "--hedge-reserve", type=float, nargs="*", default=[], help="also a hedged run with each hedge_reserve"
    )
    args = parser.parse_args()
    strategies = [s for s in args.strategies.split(",") if s]
    fakes = Fakes()
    runs: list[Run] = []
    try:
        for strategy in strategies:
            for hedge, reserve in [(None, None), (HEDGE, None), *((HEDGE, r) for r in args.hedge_reserve)]:
                runs.append(llmplex_run(fakes, strategy, hedge, args.requests, args.concurrency, reserve))
                print(runs[-1].row(), file=sys.stderr, flush=True)
        if not args.no_litellm:
            for strategy in strategies:
                runs.append(litellm_run(fakes, strategy, args.requests, args.concurrency))
                print(runs[-1].row(), file=sys.stderr, flush=True)
    finally:
        fakes.stop()
    print(
        f"\n{args.requests} calls at {args.concurrency} in flight; deployments: flaky (30 % 500s), slow (20 % with "
        f"a {SLOW_SECONDS:g} s first byte), limited ({RPM} rpm)\n"
    )
    print("| router | strategy | hedge | success | p50 ms | p99 ms | req/s | CPU ms/req | flaky / slow / limited |")
    print("|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        print(run.row())


if __name__ == "__main__":
    main()
