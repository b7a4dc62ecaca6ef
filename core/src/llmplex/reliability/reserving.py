"""Reserve a request on a call's budgets, waiting for room within the call's deadline.

A budget kept in Redis (``SharedBudgetTracker``) is reserved on a worker thread,
so that a Redis that stops answering holds neither the caller past its deadline
nor an event loop at all. A reservation the caller no longer waits for (the
deadline passed, the task was cancelled, Ctrl-C) is given back as never sent
once the worker has it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

from llmplex.reliability import workers
from llmplex.reliability.budget import BudgetTracker, Reservation, reserve_all
from llmplex.reliability.deadline import Deadline
from llmplex.types import Request

__all__ = ["areserve", "reserve"]

Held = list[Reservation]


def _waiting(
    trackers: Sequence[BudgetTracker],
    request: Request,
    deadline: Deadline | None,
    names: tuple[str, str, str | None],
) -> Held | None:
    """Reserve, waiting while in-flight requests hold the room needed; ``None`` when the deadline passed."""
    while True:
        result = reserve_all(trackers, request, *names)
        if isinstance(result, list):
            return result
        remaining = None if deadline is None else deadline.remaining()
        if remaining is not None and remaining <= 0:
            return None
        result[0].wait(result[1], remaining)


def reserve(
    trackers: Sequence[BudgetTracker],
    request: Request,
    deadline: Deadline | None,
    provider: str,
    model: str,
    plugin: str | None = None,
) -> Held | None:
    """Reserve ``request`` on every tracker, waiting while in-flight requests hold the room it needs;
    ``None`` when the deadline passed first. Raises ``LLMBudgetExceededError`` when a cap is reached.
    ``plugin`` (the provider's plugin) prices the request under a cost cap."""
    names = (provider, model, plugin)
    if deadline is None or not any(tracker.does_io for tracker in trackers):
        return _waiting(trackers, request, deadline, names)
    future = workers.submit(lambda: _waiting(trackers, request, deadline, names))
    try:
        return future.result(timeout=deadline.remaining())
    except FutureTimeout:
        if future.done():  # finished in the instant the wait timed out
            return future.result()
        _give_back_when_done(future)
        return None
    except BaseException:  # the worker's own error (nothing held), or Ctrl-C while waiting
        _give_back_when_done(future)
        raise


async def areserve(
    trackers: Sequence[BudgetTracker],
    request: Request,
    deadline: Deadline | None,
    provider: str,
    model: str,
    plugin: str | None = None,
) -> Held | None:
    """Async ``reserve``: neither waiting for room nor a budget kept in Redis blocks the event loop."""
    names = (provider, model, plugin)
    if not any(tracker.does_io for tracker in trackers):
        while True:
            result = reserve_all(trackers, request, *names)
            if isinstance(result, list):
                return result
            remaining = None if deadline is None else deadline.remaining()
            if remaining is not None and remaining <= 0:
                return None
            await result[0].await_change(result[1], remaining)
    future = workers.submit(lambda: _waiting(trackers, request, deadline, names))
    try:
        async with asyncio.timeout(None if deadline is None else deadline.remaining()):
            return await asyncio.shield(asyncio.wrap_future(future))
    except TimeoutError:
        if future.done() and not future.cancelled() and future.exception() is None:
            return future.result()
        _give_back_when_done(future)
        return None
    except BaseException:  # cancelled while waiting, or the worker's own error (nothing held then)
        _give_back_when_done(future)
        raise


def _give_back_when_done(future: Future[Held | None]) -> None:
    """Once the abandoned reservation is made, cancel it: its request was never sent."""

    def give_back(done: Future[Held | None]) -> None:
        if done.cancelled() or done.exception() is not None:
            return
        for reservation in done.result() or ():
            reservation.cancel()

    future.add_done_callback(give_back)
