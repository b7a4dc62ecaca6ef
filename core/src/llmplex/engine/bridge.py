"""Run async provider code from sync callers and sync provider code from async callers."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from functools import partial
from typing import Any, NamedTuple, TypeVar

from llmplex.reliability.guard import in_worker

__all__ = ["aiterate_in_thread", "iterate_on_loop", "run_on_loop"]

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()
_DONE = object()


def _background_loop() -> asyncio.AbstractEventLoop:
    """One daemon event loop per process that runs async providers for sync callers."""
    global _loop
    if _loop is None:
        with _loop_lock:
            if _loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="llmplex-bridge", daemon=True).start()
                _loop = loop
    return _loop


class _Stopped(NamedTuple):
    """A ``KeyboardInterrupt`` or ``SystemExit`` raised on the bridge loop, carried to the caller's thread: let out
    of the task it would stop the loop's own thread, and the caller, with every later call, would wait forever."""

    error: BaseException


def run_on_loop(make: Callable[[], Awaitable[T]]) -> T:
    """Run the awaitable ``make()`` on the bridge loop and wait for its result; a caller interrupted while it
    waits (Ctrl-C) cancels it there, however early: its answer's future exists before anything is scheduled, and
    the call starts only if that future was not cancelled by then."""
    loop = _background_loop()
    answer: concurrent.futures.Future[T | _Stopped] = concurrent.futures.Future()
    try:
        loop.call_soon_threadsafe(_start, loop, make, answer)
        result = answer.result()
    except BaseException:
        answer.cancel()
        raise
    if isinstance(result, _Stopped):
        raise result.error
    return result


def _start(
    loop: asyncio.AbstractEventLoop, make: Callable[[], Awaitable[T]], answer: concurrent.futures.Future[Any]
) -> None:
    """On the bridge loop: ``make()`` as a task whose outcome becomes ``answer``'s, unless the caller cancelled
    ``answer`` already; cancelling ``answer`` later cancels the task."""
    if answer.cancelled():
        return
    task = loop.create_task(_stopped_kept(make))
    answer.add_done_callback(partial(_cancel_if_given_up, loop, task))
    task.add_done_callback(partial(_answered, answer))


def _cancel_if_given_up(
    loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any], answer: concurrent.futures.Future[Any]
) -> None:
    """``answer`` is done (in the caller's thread or on the loop): if the caller cancelled it, so is ``task``."""
    if answer.cancelled():
        loop.call_soon_threadsafe(task.cancel)


async def _stopped_kept(make: Callable[[], Awaitable[T]]) -> T | _Stopped:
    """``await make()``; a ``KeyboardInterrupt`` or ``SystemExit`` it raises carried back as ``_Stopped``."""
    try:
        return await make()
    except (KeyboardInterrupt, SystemExit) as error:
        return _Stopped(error)


def _answered(answer: concurrent.futures.Future[Any], task: asyncio.Task[Any]) -> None:
    """``task``'s outcome handed to the waiting caller (nothing when the caller gave up on it)."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):  # the caller cancelled it meanwhile
        if task.cancelled():
            answer.cancel()
        elif (error := task.exception()) is not None:
            answer.set_exception(error)
        else:
            answer.set_result(task.result())


def iterate_on_loop(make: Callable[[], Awaitable[AsyncIterator[T]]]) -> Iterator[T]:
    """Iterate, from sync code, an async iterator that lives on the bridge loop."""
    iterator = run_on_loop(make)

    async def step() -> Any:
        try:
            return await iterator.__anext__()
        except StopAsyncIteration:
            return _DONE

    while (item := run_on_loop(step)) is not _DONE:
        yield item


async def aiterate_in_thread(make: Callable[[], Iterator[T]]) -> AsyncIterator[T]:
    """Iterate, from async code, a blocking iterator by pulling each item on a worker thread."""
    iterator = await in_worker(make)

    def step() -> Any:
        return next(iterator, _DONE)

    while (item := await in_worker(step)) is not _DONE:
        yield item
