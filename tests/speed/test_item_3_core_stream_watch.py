"""Issue 34 item 3 (async streams held to a deadline): ``aiterate_before`` holds the whole stream to its deadline with
one timer, not an ``asyncio.timeout`` per item (a timer set and cancelled per chunk). A stall mid-stream still ends
at the deadline with ``expired()``; a deadline that passes between items ends the stream at the next one without
reading it; the caller's own cancellation stays a cancellation; an item that comes before the timer's cancellation
(swallowed) is handed on, the next wait ends; ``current_deadline`` is the deadline while an item is awaited; the
timer is cancelled however the stream ends."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from llmplex.reliability import guard
from llmplex.reliability.deadline import Deadline, current_deadline
from tests.support.standing_clock import StandingClock


class Late(Exception):
    """The deadline's error in these tests."""


@pytest.fixture
def watches(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every stream's watch (its timer) made while the test runs."""
    made: list[Any] = []

    class Kept(guard._Watch):
        __slots__ = ()

        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(guard, "_Watch", Kept)
    return made


async def _numbers(count: int, seen: list[Any], stall_after: int | None = None) -> AsyncIterator[int]:
    for number in range(count):
        if number == stall_after:
            await asyncio.sleep(30)
        seen.append(current_deadline())
        yield number


def _stream(source: AsyncIterator[int], deadline: Deadline) -> AsyncIterator[int]:
    async def opened() -> AsyncIterator[int]:
        return source

    return guard.aiterate_before(opened, deadline, Late)


def test_item_3_core_one_timer_for_the_whole_stream(monkeypatch: pytest.MonkeyPatch, watches: list[Any]) -> None:
    timeouts: list[Any] = []
    timeout = asyncio.timeout

    def counted(delay: float | None) -> Any:
        timeouts.append(delay)
        return timeout(delay)

    monkeypatch.setattr(asyncio, "timeout", counted)
    deadline, seen = Deadline.after(30), list[Any]()

    async def run() -> list[int]:
        return [number async for number in _stream(_numbers(50, seen), deadline)]

    assert asyncio.run(run()) == list(range(50))
    assert len(timeouts) == 1  # the opening's; no item's
    assert seen == [deadline] * 50 and current_deadline() is None
    assert [watch.handle.cancelled() for watch in watches] == [True]


def test_item_3_core_a_stall_mid_stream_ends_at_the_deadline(watches: list[Any]) -> None:
    got: list[int] = []

    async def run() -> None:
        async for number in _stream(_numbers(5, [], stall_after=2), Deadline.after(0.2)):
            got.append(number)

    with pytest.raises(Late):
        asyncio.run(run())
    assert got == [0, 1] and watches[0].handle.cancelled()


def test_item_3_core_a_deadline_passing_between_items_ends_at_the_next(watches: list[Any]) -> None:
    seen: list[Any] = []
    got: list[int] = []

    async def run() -> None:
        async for number in _stream(_numbers(5, seen), Deadline.after(0.1)):
            got.append(number)
            await asyncio.sleep(0.3)  # the caller's own work, past the deadline: not cancelled

    with pytest.raises(Late):
        asyncio.run(run())
    assert got == [0] and len(seen) == 1  # the next item was not read


def test_item_3_core_the_callers_cancellation_stays_a_cancellation(watches: list[Any]) -> None:
    closed: list[bool] = []

    async def source() -> AsyncIterator[int]:
        try:
            yield 0
            await asyncio.sleep(30)
            yield 1
        finally:
            closed.append(True)

    async def run() -> tuple[str, int]:
        async def consume() -> None:
            async for _ in _stream(source(), Deadline.after(30)):
                pass

        task = asyncio.ensure_future(consume())
        await asyncio.sleep(0.05)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled", task.cancelling()
        return "ended", task.cancelling()

    assert asyncio.run(run()) == ("cancelled", 1) and closed == [True]
    assert watches[0].handle.cancelled()


def test_item_3_core_an_item_before_the_swallowed_cancellation_is_handed_on(watches: list[Any]) -> None:
    async def stubborn() -> AsyncIterator[int]:
        yield 0
        with contextlib.suppress(asyncio.CancelledError):  # swallowed: the item comes anyway
            await asyncio.sleep(30)
        yield 1
        yield 2

    async def run() -> tuple[list[int], str, int]:
        got: list[int] = []
        try:
            async for number in _stream(stubborn(), Deadline.after(0.1)):
                got.append(number)
        except Late:
            task = asyncio.current_task()
            assert task is not None
            return got, "late", task.cancelling()
        return got, "ended", -1

    assert asyncio.run(run()) == ([0, 1], "late", 0)  # the task is not left cancelled


async def _slow(count: int) -> AsyncIterator[int]:
    for number in range(count):
        await asyncio.sleep(0.15)
        yield number


def test_item_3_core_the_timer_asks_the_deadlines_own_clock_before_it_ends_the_stream() -> None:
    """A deadline on a clock of its own is passed when that clock says so: the timer, set from the time left at the
    start, waits again instead of ending the stream early (here 0.45 s of real time pass, none by the deadline's
    clock); once that clock runs, the stream ends at the deadline as before."""
    clock = StandingClock()
    deadline = Deadline(0.2, clock.as_clock())

    async def read() -> list[int]:
        return [number async for number in _stream(_slow(3), deadline)]

    assert asyncio.run(read()) == [0, 1, 2]
    clock.run()
    with pytest.raises(Late):
        asyncio.run(read())
