"""Hold provider I/O and tool handlers to a deadline, whatever the code inside does.

A timeout handed to an SDK bounds one blocking read, not a whole response: a
server that trickles a byte every few seconds, a stream that stalls, a plugin
that ignores its timeout or a tool that never returns would outlive the
deadline. These helpers end the caller's wait at the deadline itself and raise
the error ``expired()`` builds:

- async code is cancelled at the deadline;
- blocking code runs on a worker thread (``llmplex.reliability.workers``)
  that the caller abandons at the deadline; it ends on its own later (an HTTP
  transport from ``llmplex.http`` ends it at the deadline too).

Inside, ``current_deadline`` is the deadline.
With ``deadline=None`` each helper just runs the code, in the caller's thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import queue
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from llmplex.reliability import workers
from llmplex.reliability.deadline import Deadline, deadline_scope

__all__ = ["aiterate_before", "await_before", "call_before", "in_worker", "iterate_before"]

T = TypeVar("T")
Expired = Callable[[], BaseException]

_ITEM, _END, _FAILED = 0, 1, 2


def call_before(fn: Callable[[], T], deadline: Deadline | None, expired: Expired) -> T:
    """``fn()``; with a deadline it runs on a worker thread, abandoned when the deadline passes first."""
    if deadline is None:
        return fn()
    if deadline.expired:
        raise expired()

    def scoped() -> T:
        with deadline_scope(deadline):
            return fn()

    future = workers.submit(scoped)
    try:
        return future.result(timeout=deadline.remaining())
    except FutureTimeout:
        if future.done():  # finished in the instant the wait timed out
            return future.result()
        future.cancel()
        raise expired() from None


async def in_worker(fn: Callable[[], T]) -> T:
    """``await`` a blocking ``fn()`` run on a worker thread (abandoned, not awaited, when cancelled)."""
    return await asyncio.wrap_future(workers.submit(fn))


async def await_before(make: Callable[[], Awaitable[T]], deadline: Deadline | None, expired: Expired) -> T:
    """``await make()``, cancelled at the deadline."""
    if deadline is None:
        return await make()
    if deadline.expired:
        raise expired()
    with deadline_scope(deadline):
        scope = asyncio.timeout(deadline.remaining())
        try:
            async with scope:
                return await make()
        except TimeoutError:
            if scope.expired():
                raise expired() from None
            raise


async def aiterate_before(
    open_: Callable[[], Awaitable[AsyncIterator[T]]], deadline: Deadline | None, expired: Expired
) -> AsyncIterator[T]:
    """The items of the async iterator ``await open_()`` until it ends; past the deadline, ``expired()``.

    Held to a deadline, each item is awaited here with ``current_deadline`` the deadline, under the stream's one
    timer (``_Watch``): no coroutine per item between this generator and the iterator's ``__anext__``."""
    iterator = await await_before(open_, deadline, expired)
    watch = None if deadline is None else _Watch(deadline, expired)
    read = iterator.__anext__
    try:
        while True:
            if watch is None:
                try:
                    item = await read()
                except StopAsyncIteration:
                    return
                yield item
                continue
            if watch.fired or watch.deadline.expired:
                raise expired()
            task = asyncio.current_task()
            assert task is not None  # awaited: a task runs it
            cancelling = task.cancelling()
            watch.waiting = task
            try:
                with watch.scope:
                    item = await read()
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if watch.cancelled:
                    watch.cancelled = False
                    if task.uncancel() <= cancelling:  # the timer's own cancellation, no one else's
                        raise expired() from None
                raise
            finally:
                watch.waiting = None
            if watch.cancelled:  # the item came first (its cancellation swallowed): the next wait raises
                watch.cancelled = False
                task.uncancel()
            yield item
    finally:
        if watch is not None:
            watch.handle.cancel()
        close: Callable[[], Any] | None = getattr(iterator, "aclose", None) or getattr(iterator, "close", None)
        if close is not None:
            closing = close()
            if inspect.isawaitable(closing):
                await closing


class _Watch:
    """The deadline of one async stream, on one timer for the whole stream (an ``asyncio.timeout`` per item cost a
    timer set and cancelled per chunk): when it passes while an item is awaited (``waiting``, by
    ``aiterate_before``), the waiting task is cancelled and the wait raises ``expired()``; when it passes between
    items, the next wait raises it before reading. ``scope`` makes the deadline ``current_deadline`` while an item
    is awaited (one scope for the whole stream, entered for each item)."""

    __slots__ = ("cancelled", "deadline", "expired", "fired", "handle", "loop", "scope", "waiting")

    def __init__(self, deadline: Deadline, expired: Expired) -> None:
        self.deadline, self.expired = deadline, expired
        self.scope = deadline_scope(deadline)
        self.fired = False
        self.waiting: asyncio.Task[Any] | None = None
        self.cancelled = False  # the timer cancelled the waiting task
        self.loop = asyncio.get_running_loop()
        self.handle = self.loop.call_at(self.loop.time() + deadline.remaining(), self._fire)

    def _fire(self) -> None:
        left = self.deadline.remaining()
        if left > 0:  # not passed by the deadline's own clock (one of its own, or the loop's timer a hair early)
            self.handle = self.loop.call_at(self.loop.time() + left, self._fire)
            return
        self.fired = True
        if self.waiting is not None:
            self.waiting.cancel()
            self.cancelled = True


def iterate_before(open_: Callable[[], Iterator[T]], deadline: Deadline | None, expired: Expired) -> Iterator[T]:
    """The items of the blocking iterator ``open_()``, opened and read on a worker thread.

    A stall (or a trickle) cannot pass the deadline. When the caller stops early or
    the deadline passes, the worker closes the iterator after its current read.
    Without a deadline, ``open_()`` itself, opened now and read on this thread (no layer in between).
    """
    if deadline is None:
        return open_()
    return _pumped(open_, deadline, expired)


def _pumped(open_: Callable[[], Iterator[T]], deadline: Deadline, expired: Expired) -> Iterator[T]:
    if deadline.expired:
        raise expired()
    pump = _Pump(open_, deadline)
    try:
        while True:
            remaining = deadline.remaining()
            if remaining <= 0:
                raise expired()
            try:
                kind, value = pump.items.get(timeout=remaining)
            except queue.Empty:
                raise expired() from None
            if kind == _ITEM:
                yield value
            elif kind == _END:
                return
            else:
                raise value
    finally:
        pump.abandoned.set()


class _Pump:
    """Opens and reads a blocking iterator on a worker thread, into a queue."""

    def __init__(self, open_: Callable[[], Iterator[Any]], deadline: Deadline) -> None:
        self.open = open_
        self.deadline = deadline
        self.items: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        self.abandoned = threading.Event()
        workers.submit(self._run)

    def _run(self) -> None:
        iterator: Iterator[Any] | None = None
        with deadline_scope(self.deadline):
            try:
                iterator = self.open()
                for item in iterator:
                    if self.abandoned.is_set():
                        break
                    self.items.put((_ITEM, item))
                else:
                    self.items.put((_END, None))
            except BaseException as exc:  # handed to the consumer thread, which raises it
                self.items.put((_FAILED, exc))
            if self.abandoned.is_set() and iterator is not None:
                close: Callable[[], Any] | None = getattr(iterator, "close", None)
                if close is not None:
                    with contextlib.suppress(Exception):
                        close()
