"""Run async provider code from sync callers and sync provider code from async callers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
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
    waits (Ctrl-C) cancels it there."""

    async def runner() -> T | _Stopped:
        try:
            return await make()
        except (KeyboardInterrupt, SystemExit) as error:
            return _Stopped(error)

    future = asyncio.run_coroutine_threadsafe(runner(), _background_loop())
    try:
        result = future.result()
    except BaseException:
        future.cancel()
        raise
    if isinstance(result, _Stopped):
        raise result.error
    return result


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
