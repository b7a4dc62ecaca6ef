"""Issue 21 item 7: a request cancelled while it waits for a slot (max_concurrency) or a window (rate_limit),
or while its shared-budget reservation is being made, is returned to the budget and counted as never sent."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex import hookimpl
from llmplex.reliability import reserving
from llmplex.reliability.shared_budget import SharedBudgetTracker
from tests.support.fault_server import Fault, FaultServer
from tests.support.fixtures import fault_server
from tests.support.redis_server import RedisServer, free_port

__all__ = ["fault_server"]

MODEL = "openai:gpt-4o-mini"


@pytest.fixture(autouse=True)
def fresh_memory_limits() -> None:
    from llmplex.reliability.storage import _memory

    _memory().reset()


class _Held:
    """Observer: set once a call reports that a limit holds it back (``Throttled``), i.e. it waits now."""

    def __init__(self) -> None:
        self.event: asyncio.Event | None = None

    @hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        if isinstance(event, llmplex.Throttled) and self.event is not None:
            self.event.set()


def _client(
    server: FaultServer, tracker: llmplex.BudgetTracker, held: _Held | None = None, **limits: Any
) -> llmplex.Client:
    config = {
        "providers": {"openai": {"base_url": server.url, "api_key": "k", **limits}},
        "throttle": {"max_attempts": 1},
    }
    return llmplex.Client(config, budget=tracker, plugins=[held] if held is not None else [])


def test_item_7_cancelled_while_waiting_for_a_slot_is_never_sent(fault_server: FaultServer) -> None:
    tracker = llmplex.BudgetTracker(llmplex.Budget(max_requests=10))
    held = _Held()
    llm = _client(fault_server, tracker, held, max_concurrency=1)
    fault_server.enqueue(Fault.hang(60))  # the first call holds the only slot until it is cancelled

    async def main() -> tuple[int, int, int]:
        held.event = asyncio.Event()
        first = asyncio.create_task(llm.acomplete(MODEL, "first"))
        assert await asyncio.to_thread(fault_server.wait_for_requests, 1)  # the first is in flight
        second = asyncio.create_task(llm.acomplete(MODEL, "second"))
        await held.event.wait()  # reserved on the budget, waiting for the slot
        while_waiting = tracker.snapshot().requests
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        after_cancel = tracker.snapshot().requests
        first.cancel()  # sent: it stays counted
        with pytest.raises(asyncio.CancelledError):
            await first
        return while_waiting, after_cancel, tracker.snapshot().requests

    while_waiting, after_cancel, at_end = asyncio.run(main())
    assert (while_waiting, after_cancel, at_end) == (2, 1, 1)
    assert fault_server.request_count == 1
    assert tracker._in_flight == 0 and tracker._held_input == 0


def test_item_7_cancelled_while_waiting_for_a_rate_window_is_never_sent(fault_server: FaultServer) -> None:
    tracker = llmplex.BudgetTracker(llmplex.Budget(max_requests=10, max_total_tokens=10_000))
    held = _Held()
    llm = _client(fault_server, tracker, held, rate_limit="1/minute")

    async def main() -> tuple[int, int]:
        held.event = asyncio.Event()
        await llm.acomplete(MODEL, "first", max_tokens=5)
        second = asyncio.create_task(llm.acomplete(MODEL, "second", max_tokens=5))
        await held.event.wait()  # waits about a minute for the window, its reservation held
        waiting = tracker.snapshot().requests
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        return waiting, tracker.snapshot().requests

    assert asyncio.run(main()) == (2, 1)
    assert fault_server.request_count == 1
    assert (tracker._in_flight, tracker._held_input, tracker._held_output, tracker._held_total) == (0, 0, 0, 0)
    assert tracker.snapshot().total_tokens > 0  # the first, sent and answered, stays counted


def test_item_7_cancelled_while_reserving_on_a_frozen_shared_budget_is_given_back(
    fault_server: FaultServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reservation runs on a worker thread; made after the task was cancelled, it is cancelled too."""
    handled = threading.Event()  # the abandoned reservation ended and what it held was handed back
    give_back = reserving._give_back_when_done

    def watched(future: Future[Any]) -> None:
        give_back(future)
        future.add_done_callback(lambda _: handled.set())  # runs after give_back's own callback

    monkeypatch.setattr(reserving, "_give_back_when_done", watched)
    with RedisServer(tmp_path / "redis") as server:
        tracker = SharedBudgetTracker(llmplex.Budget(max_requests=10), storage=server.url, name=f"cancel-{free_port()}")
        llm = _client(fault_server, tracker)
        llm.complete(MODEL, "warm up")  # connected
        server.pause()

        async def main() -> None:
            task = asyncio.create_task(llm.acomplete(MODEL, "never sent"))
            await asyncio.sleep(0.3)  # its reservation waits on the frozen Redis, on a worker thread
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        began = time.monotonic()
        asyncio.run(main())
        assert time.monotonic() - began < 2.0  # the loop was never held by the frozen Redis
        server.resume()
        assert handled.wait(10)  # the abandoned reservation is made once Redis answers, then given back
        tracker.snapshot()  # waits for this process's settlement writes (the give-back's among them)
        assert tracker._read("in_flight", "requests") == [0, 1]  # only the warm-up counts
    assert fault_server.request_count == 1
