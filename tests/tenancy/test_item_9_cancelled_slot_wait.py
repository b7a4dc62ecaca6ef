"""Issue 31 item 9 (third promise): a call cancelled while it waits for ``max_concurrency`` is never counted by
the budget as sent.

Every step waits on an event, never on a sleep: the first call holds the only slot (the mock answers after an
hour), and the second is cancelled once its own ``Throttled(max_concurrency)`` event says it is waiting for that
slot. The hostile orders are the ones a timed test cannot pin down: the cancel landing in the very tick the slot
is handed over (the waiter already woken, not yet resumed), the holder and the waiter cancelled together in
either order, and the holder answering while the waiter is cancelled from inside that answer's own event. 200
rounds each, on one event loop; after every round what the budget counts is exactly what the provider received.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

import pytest

import llmplex
from llmplex import hookimpl
from llmplex.providers.mock import MockBackend

ROUNDS = 200
_prefixes = itertools.count()


class _Signals:
    """Observer: wakes the test when the waiter reports its wait, and runs ``on_answer`` inside the holder's
    ``PromptExecuted`` (the slot is free by then, the waiter woken but not resumed)."""

    def __init__(self) -> None:
        self.waiting: asyncio.Event | None = None
        self.on_answer: Callable[[], None] | None = None

    @hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        if isinstance(event, llmplex.Throttled) and event.reason == "max_concurrency" and self.waiting is not None:
            self.waiting.set()
        if isinstance(event, llmplex.PromptExecuted) and self.on_answer is not None:
            self.on_answer()


def _client() -> tuple[llmplex.Client, MockBackend, _Signals, str]:
    prefix = f"slot9{next(_prefixes)}"  # slots are per prefix and process-wide: no other test shares these
    signals = _Signals()
    config = {"providers": {prefix: {"plugin": "mock", "max_concurrency": 1}}, "throttle": {"max_attempts": 1}}
    llm = llmplex.Client(config, plugins=[signals])
    backend: MockBackend = llm.provider_client(prefix)
    return llm, backend, signals, f"{prefix}:echo"


def _settled(tracker: llmplex.BudgetTracker) -> tuple[int, int, int, int]:
    return tracker._in_flight, tracker._held_input, tracker._held_output, tracker._held_total


async def _cancelled(task: asyncio.Task[Any]) -> bool:
    """Await ``task``; whether it ended cancelled (an answer or an error otherwise)."""
    try:
        await task
    except asyncio.CancelledError:
        return True
    except llmplex.LLMError:
        return False
    return False


async def _round(llm: llmplex.Client, signals: _Signals, model: str, tracker: llmplex.BudgetTracker, order: str) -> int:
    """One holder and one waiter; returns how many calls ended cancelled."""
    signals.waiting = asyncio.Event()
    backend = llm.provider_client(model.partition(":")[0])
    backend.push("holder", delay=0.0 if order == "answered" else 3600.0)
    holder = asyncio.create_task(llm.acomplete(model, "holder", budget=tracker))
    if order != "answered":
        await asyncio.sleep(0)  # the holder takes the slot first (it reaches its hour-long answer)
    waiter = asyncio.create_task(llm.acomplete(model, "waiter", budget=tracker))
    if order == "answered":
        signals.on_answer = waiter.cancel  # cancelled inside the holder's answer event: slot free, waiter woken
    else:
        await signals.waiting.wait()  # reserved on the budget, waiting for the slot
        if order == "waiting":
            waiter.cancel()
            waiter_cancelled = await _cancelled(waiter)  # given back before the holder ends
            holder.cancel()
            return waiter_cancelled + await _cancelled(holder)
        elif order == "handed over":
            holder.add_done_callback(lambda _: waiter.cancel())  # runs after the holder gave the slot back
            holder.cancel()
        elif order == "holder first":
            holder.cancel()
            waiter.cancel()
        else:
            waiter.cancel()
            holder.cancel()
    results = [await _cancelled(holder), await _cancelled(waiter)]
    signals.on_answer = None
    return sum(results)


@pytest.mark.parametrize("order", ["waiting", "handed over", "holder first", "waiter first", "answered"])
def test_item_9_a_call_cancelled_while_waiting_for_max_concurrency_is_never_counted_as_sent(order: str) -> None:
    llm, backend, signals, model = _client()
    tracker = llmplex.BudgetTracker(llmplex.Budget(max_requests=10 * ROUNDS))

    async def main() -> list[tuple[int, int, tuple[int, int, int, int], int]]:
        seen = []
        for _ in range(ROUNDS):
            cancelled = await _round(llm, signals, model, tracker, order)
            seen.append((tracker.snapshot().requests, len(backend.calls), _settled(tracker), cancelled))
        return seen

    seen = asyncio.run(main())
    for number, (counted, received, held, _) in enumerate(seen, 1):
        assert counted == received, f"round {number}: the budget counts {counted} requests, the provider got {received}"
        assert held == (0, 0, 0, 0), f"round {number}: still held after both calls ended: {held}"
    # the waiter never reached the provider: one call per round, the holder's
    assert [received for _, received, _, _ in seen] == list(range(1, ROUNDS + 1))
    assert {cancelled for *_, cancelled in seen} == ({1} if order == "answered" else {2})
