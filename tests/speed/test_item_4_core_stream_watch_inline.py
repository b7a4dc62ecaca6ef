"""Issue 34 item 4 (async streams held to a deadline, per chunk): ``aiterate_before`` awaits each item itself.

No coroutine per item between the guard's generator and the iterator it reads (``_Watch.next`` made one for every
chunk), and one ``deadline_scope`` for the whole stream, entered for each item: ``current_deadline`` is the
deadline while an item is awaited and nothing after it; the timer is cancelled however the stream ends. The rest of
the watch's behaviour (a stall, a deadline between items, the caller's cancellation, a swallowed cancellation, the
deadline's own clock) is ``tests/speed/test_item_3_core_stream_watch.py``'s, unchanged.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from typing import Any

import pytest

from llmplex.reliability import deadline as deadlines
from llmplex.reliability import guard
from llmplex.reliability.deadline import Deadline, current_deadline


class Late(Exception):
    """The deadline's error in these tests."""


async def _numbers(count: int, readers: list[Any], seen: list[Any]) -> AsyncIterator[int]:
    for number in range(count):
        frame = inspect.currentframe()
        readers.append(frame.f_back.f_code if frame is not None and frame.f_back is not None else None)
        seen.append(current_deadline())
        yield number


def _stream(source: AsyncIterator[int], deadline: Deadline | None) -> AsyncIterator[int]:
    async def opened() -> AsyncIterator[int]:
        return source

    return guard.aiterate_before(opened, deadline, Late)


@pytest.mark.parametrize("held", [True, False], ids=["deadline", "no deadline"])
def test_item_4_core_each_item_is_awaited_by_the_guards_generator_itself(held: bool) -> None:
    readers: list[Any] = []
    seen: list[Any] = []
    deadline = Deadline.after(30) if held else None

    async def run() -> list[int]:
        got = []
        async for number in _stream(_numbers(20, readers, seen), deadline):
            assert current_deadline() is None  # the caller's own code runs outside the deadline's scope
            got.append(number)
        return got

    assert asyncio.run(run()) == list(range(20))
    assert readers.count(guard.aiterate_before.__code__) == len(readers) == 20, readers
    assert seen == [deadline] * 20


def test_item_4_core_one_deadline_scope_a_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []
    scope = deadlines.deadline_scope

    def counted(deadline: Deadline | None) -> Any:
        made.append(deadline)
        return scope(deadline)

    monkeypatch.setattr(guard, "deadline_scope", counted)
    deadline = Deadline.after(30)

    async def run() -> list[int]:
        return [number async for number in _stream(_numbers(20, [], []), deadline)]

    assert asyncio.run(run()) == list(range(20))
    assert made == [deadline, deadline]  # the opening's (``await_before``) and the stream's: none an item
