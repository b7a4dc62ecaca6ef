"""One worker process of the shared-limits tests: many calls through one Client, timed.

    python -m tests.scaling.worker JOB.json

The job (JSON) gives ``config`` (a Client config mapping), ``mode`` (``sync`` or
``async``), ``requests`` (how many calls), ``concurrency`` (async tasks at once),
``prompt``, ``max_tokens``, ``timeout`` (each call's deadline or null),
``ready`` (a file it creates once warmed up), ``go`` (a file whose creation
starts every worker at once) and ``out`` (where to write the results). Each result says whether the call
answered, the error class otherwise, and ``time.time()`` readings: ``started``
(before the call) and ``ended``; ``admitted`` lists the moment of every
``RequestStarted`` event (the limits let an attempt go) and ``throttled`` the
reason of every ``Throttled`` event.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import llmplex
from llmplex import hookimpl

MODEL = "openai:gpt-4o-mini"


class Clocked:
    """Observer: when each request was admitted, and why it waited."""

    def __init__(self) -> None:
        self.admitted: list[float] = []
        self.throttled: list[str] = []

    @hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        if isinstance(event, llmplex.RequestStarted):
            self.admitted.append(time.time())
        elif isinstance(event, llmplex.Throttled):
            self.throttled.append(event.reason)


def _call_args(job: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {"timeout": job.get("timeout")}
    if job.get("max_tokens") is not None:
        args["max_tokens"] = job["max_tokens"]
    return args


def _result(ok: bool, error: BaseException | None, started: float) -> dict[str, Any]:
    return {
        "ok": ok,
        "error": type(error).__name__ if error else None,
        "message": str(error) if error else None,
        "started": started,
        "ended": time.time(),
    }


def run_sync(client: llmplex.Client, job: dict[str, Any]) -> list[dict[str, Any]]:
    results = []
    for _ in range(job["requests"]):
        started = time.time()
        try:
            client.complete(MODEL, job["prompt"], **_call_args(job))
            results.append(_result(True, None, started))
        except llmplex.LLMError as error:
            results.append(_result(False, error, started))
    return results


async def run_async(client: llmplex.Client, job: dict[str, Any]) -> list[dict[str, Any]]:
    gate = asyncio.Semaphore(job.get("concurrency", 4))

    async def one() -> dict[str, Any]:
        async with gate:
            started = time.time()
            try:
                await client.acomplete(MODEL, job["prompt"], **_call_args(job))
                return _result(True, None, started)
            except llmplex.LLMError as error:
                return _result(False, error, started)

    return list(await asyncio.gather(*(one() for _ in range(job["requests"]))))


def warm_up(client: llmplex.Client) -> None:
    """Load the plugin, ``limits`` and the storage before the start line, so that the workers start together."""
    route = client.route(MODEL)
    route.provider.client(False)
    limits = client.calls.limits(route.provider.name)
    if limits is not None:
        limits.store.storage()
    if client.calls.budget is not None:
        client.calls.budget.snapshot()
    import limits.aio.strategies


def main(path: str) -> None:
    job = json.loads(Path(path).read_text(encoding="utf-8"))
    clocked = Clocked()
    client = llmplex.Client(job["config"], plugins=[clocked])
    warm_up(client)
    Path(job["ready"]).touch()
    go = Path(job["go"])
    while not go.exists():  # the harness creates it once every worker is ready
        time.sleep(0.005)
    results = run_sync(client, job) if job["mode"] == "sync" else asyncio.run(run_async(client, job))
    report = {"results": results, "admitted": clocked.admitted, "throttled": clocked.throttled}
    Path(job["out"]).write_text(json.dumps(report), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
