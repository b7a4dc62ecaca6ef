"""The worker processes of the shared-limits tests: many calls through one Client each, timed.

    python -m tests.scaling.worker JOB.json [JOB.json ...]

One process imports llmplex, the openai plugin and the limits storage once, then forks one worker process per
job (a start of Python with those imports costs seconds of CPU on the 2-core machine; a fork, milliseconds). Each
worker is its own OS process with its own Client, connections and limiter; the first process exits 1 if any
worker failed.

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
import atexit
import importlib
import importlib.util
import json
import os
import sys
import threading
import time
import traceback
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


def preload(path: str) -> None:
    """Import what every worker would (the plugin through a route, the limits storage), with no connection made."""
    job = json.loads(Path(path).read_text(encoding="utf-8"))
    llmplex.Client(job["config"]).route(MODEL)
    for name in ("limits.aio.strategies", "limits.storage", "redis", "redis.asyncio"):
        if importlib.util.find_spec(name.split(".")[0]) is not None:
            importlib.import_module(name)

    assert threading.active_count() == 1, "a thread before the fork would be lost in every worker"


def fork_workers(paths: list[str]) -> int:
    """One forked worker per job; 0 when every one of them exited 0."""
    preload(paths[0])
    children = []
    for path in paths:
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                main(path)
            except BaseException:
                traceback.print_exc()
                status = 1
            finally:
                # what the worker's own interpreter runs at its exit (os._exit skips it): the library's exit hooks,
                # such as the wait for a shared budget's settlement still being written
                atexit._run_exitfuncs()
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        children.append((pid, path))
    failed = [path for pid, path in children if os.waitpid(pid, 0)[1] != 0]
    for path in failed:
        print(f"the worker of {path} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(fork_workers(sys.argv[1:]))
