"""Issue 26 item 7 (Ray batches): a run's workers close their clients before they are killed.

``bench/ray_batch.py`` showed every worker dying with its aiohttp sessions open ("Unclosed client session"
in the Ray logs): the actors were killed without their llmplex ``Client`` being closed.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from llmplex.batching.ray_run import CLOSE_SECONDS, _Workers
from llmplex.batching.ray_worker import RowWorker
from llmplex.config.schema import Config


class _Method:
    def __init__(self, actor: _Actor, name: str) -> None:
        self.actor, self.name = actor, name

    def remote(self, *args: Any) -> str:
        self.actor.log.append((self.name, self.actor.number))
        return f"{self.name}-{self.actor.number}"


class _Actor:
    def __init__(self, log: list[tuple[str, int]], number: int) -> None:
        self.log, self.number = log, number
        self.close = _Method(self, "close")
        self.run = _Method(self, "run")


class _Ray:
    """What ``_Workers`` uses of ``ray``: ``wait`` and ``kill`` (recorded in order)."""

    def __init__(self, log: list[tuple[str, int]], wait_fails: bool = False) -> None:
        self.log = log
        self.wait_fails = wait_fails
        self.waited: list[tuple[list[str], float]] = []

    def wait(self, refs: list[str], num_returns: int, timeout: float) -> tuple[list[str], list[str]]:
        self.waited.append((refs, timeout))
        if self.wait_fails:
            raise RuntimeError("the cluster went away")
        return refs, []

    def kill(self, actor: _Actor, no_restart: bool) -> None:
        self.log.append(("kill", actor.number))


def _workers(ray: _Ray, log: list[tuple[str, int]], count: int = 2) -> _Workers:
    numbers = iter(range(count))

    class Remote:
        @staticmethod
        def remote(*arguments: Any) -> _Actor:
            return _Actor(log, next(numbers))

    return _Workers(ray, Remote, (None, None), count)


def test_item_7_workers_close_their_clients_before_they_are_killed() -> None:
    log: list[tuple[str, int]] = []
    ray = _Ray(log)
    _workers(ray, log).stop()
    assert log == [("close", 0), ("close", 1), ("kill", 0), ("kill", 1)]
    assert ray.waited == [(["close-0", "close-1"], CLOSE_SECONDS)]


def test_item_7_a_worker_that_cannot_close_is_killed_all_the_same() -> None:
    log: list[tuple[str, int]] = []
    _workers(_Ray(log, wait_fails=True), log).stop()
    assert [entry for entry in log if entry[0] == "kill"] == [("kill", 0), ("kill", 1)]


def test_item_7_a_row_worker_closes_its_client(monkeypatch: Any) -> None:
    own = {name: value for name, value in os.environ.items() if name.startswith("LLMPLEX_")}
    worker = RowWorker(Config(), own)  # given this process's variables: it drops any it is not given
    assert {name: value for name, value in os.environ.items() if name.startswith("LLMPLEX_")} == own
    closed: list[bool] = []

    async def aclose() -> None:
        closed.append(True)

    monkeypatch.setattr(worker.client, "aclose", aclose)
    asyncio.run(worker.close())
    assert closed == [True]


def test_item_7_a_worker_whose_close_cannot_even_be_sent_is_killed_all_the_same() -> None:
    log: list[tuple[str, int]] = []
    workers = _workers(_Ray(log), log)

    def refuse(*args: Any) -> str:
        raise RuntimeError("the actor is gone")

    workers.actors[0].close.remote = refuse  # type: ignore[method-assign]
    workers.stop()
    assert [entry for entry in log if entry[0] == "kill"] == [("kill", 0), ("kill", 1)]
