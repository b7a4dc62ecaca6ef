"""Issue 34 item 3 (async calls held to a deadline): ``await_before`` holds its await to the deadline with the guard's
own watch (one timer, cancelled however the await ends), not an ``asyncio.timeout`` scope (a ``Timeout`` object and
its checks besides the timer, per guarded attempt); ``aiterate_before`` opens its stream under the stream's one watch
(no timer of the opening's own). A stall still ends at the deadline with ``expired()``, the caller's cancellation stays
a cancellation, a deadline already passed runs nothing, the task is not left cancelled, ``current_deadline`` is the
deadline inside, and the timer asks the deadline's own clock before it ends the await."""

from __future__ import annotations

import asyncio
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
    """Every watch (timer) made while the test runs."""
    made: list[Any] = []

    class Kept(guard._Watch):
        __slots__ = ()

        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(guard, "_Watch", Kept)
    return made


@pytest.fixture
def timeouts(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The delay of every ``asyncio.timeout`` made while the test runs."""
    made: list[Any] = []
    timeout = asyncio.timeout

    def counted(delay: float | None) -> Any:
        made.append(delay)
        return timeout(delay)

    monkeypatch.setattr(asyncio, "timeout", counted)
    return made


def test_item_3_core_an_await_makes_no_asyncio_timeout(watches: list[Any], timeouts: list[Any]) -> None:
    deadline = Deadline.after(30)
    seen: list[Any] = []

    async def answer() -> str:
        await asyncio.sleep(0)
        seen.append(current_deadline())
        return "done"

    async def run() -> tuple[str, int]:
        got = await guard.await_before(answer, deadline, Late)
        task = asyncio.current_task()
        assert task is not None
        return got, task.cancelling()

    assert asyncio.run(run()) == ("done", 0)
    assert timeouts == [] and seen == [deadline] and current_deadline() is None
    assert [watch.handle.cancelled() for watch in watches] == [True]


def test_item_3_core_a_stream_opens_under_its_one_watch(watches: list[Any], timeouts: list[Any]) -> None:
    deadline = Deadline.after(30)
    seen: list[Any] = []

    async def numbers() -> AsyncIterator[int]:
        for number in range(3):
            seen.append(current_deadline())
            yield number

    async def opened() -> AsyncIterator[int]:
        seen.append(current_deadline())
        return numbers()

    async def run() -> list[int]:
        return [number async for number in guard.aiterate_before(opened, deadline, Late)]

    assert asyncio.run(run()) == [0, 1, 2]
    assert timeouts == [] and seen == [deadline] * 4
    assert [watch.handle.cancelled() for watch in watches] == [True]


def test_item_3_core_a_stalled_await_ends_at_the_deadline(watches: list[Any]) -> None:
    async def stalled() -> str:
        await asyncio.sleep(30)
        return "late"

    async def run() -> tuple[str, int]:
        try:
            await guard.await_before(stalled, Deadline.after(0.1), Late)
        except Late:
            task = asyncio.current_task()
            assert task is not None
            return "late", task.cancelling()
        return "answered", -1

    assert asyncio.run(run()) == ("late", 0)  # the task is not left cancelled
    assert watches[0].handle.cancelled()


def test_item_3_core_a_stalled_opening_ends_at_the_deadline(watches: list[Any]) -> None:
    async def stalled() -> AsyncIterator[int]:
        await asyncio.sleep(30)
        raise AssertionError("never opened")

    async def run() -> None:
        async for _ in guard.aiterate_before(stalled, Deadline.after(0.1), Late):
            pass

    with pytest.raises(Late):
        asyncio.run(run())
    assert len(watches) == 1 and watches[0].handle.cancelled()


def test_item_3_core_the_callers_cancellation_of_an_await_stays_a_cancellation(watches: list[Any]) -> None:
    async def stalled() -> None:
        await asyncio.sleep(30)

    async def run() -> tuple[str, int]:
        task = asyncio.ensure_future(guard.await_before(stalled, Deadline.after(30), Late))
        await asyncio.sleep(0.05)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled", task.cancelling()
        return "ended", task.cancelling()

    assert asyncio.run(run()) == ("cancelled", 1)
    assert watches[0].handle.cancelled()


def test_item_3_core_a_passed_deadline_runs_nothing(watches: list[Any]) -> None:
    made: list[bool] = []

    async def answer() -> None:
        made.append(True)

    async def run() -> None:
        await guard.await_before(answer, Deadline.after(0), Late)

    with pytest.raises(Late):
        asyncio.run(run())
    assert made == [] and all(watch.handle.cancelled() for watch in watches)


def test_item_3_core_the_awaits_timer_asks_the_deadlines_own_clock() -> None:
    """0.3 s of real time pass, none by the deadline's clock: the await is answered; once that clock runs, the
    await ends at the deadline."""
    clock = StandingClock()
    deadline = Deadline(0.1, clock.as_clock())

    async def slow() -> str:
        await asyncio.sleep(0.3)
        return "done"

    async def run() -> str:
        return await guard.await_before(slow, deadline, Late)

    assert asyncio.run(run()) == "done"
    clock.run()
    with pytest.raises(Late):
        asyncio.run(run())
