"""Hold provider I/O to a deadline, in async code and in sync streams that may stall.

The SDK timeout (the seconds left, passed on each call) bounds one blocking
read, not a whole stream: a stream that sends a few events and then trickles
or stalls could outlive the deadline. These helpers end the wait at the
deadline itself and raise the error ``expired()`` builds.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import queue
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

from llmplex.reliability.deadline import Deadline

__all__ = ["aiterate_before", "await_before", "iterate_before"]

T = TypeVar("T")
Expired = Callable[[], BaseException]

_ITEM, _END, _FAILED = 0, 1, 2


async def await_before(awaitable: Awaitable[T], deadline: Deadline, expired: Expired) -> T:
    """``await awaitable``, cancelled at the deadline."""
    scope = asyncio.timeout(deadline.remaining())
    try:
        async with scope:
            return await awaitable
    except TimeoutError:
        if scope.expired():
            raise expired() from None
        raise


async def aiterate_before(iterator: AsyncIterator[T], deadline: Deadline, expired: Expired) -> AsyncIterator[T]:
    """The items of ``iterator`` until it ends; past the deadline, ``expired()`` is raised instead."""
    try:
        while True:
            if deadline.expired:
                raise expired()
            scope = asyncio.timeout(deadline.remaining())
            try:
                async with scope:
                    item = await anext(iterator)
            except StopAsyncIteration:
                return
            except TimeoutError:
                if scope.expired():
                    raise expired() from None
                raise
            yield item
    finally:
        close: Callable[[], Any] | None = getattr(iterator, "aclose", None) or getattr(iterator, "close", None)
        if close is not None:
            closing = close()
            if inspect.isawaitable(closing):
                await closing


def iterate_before(iterator: Iterator[T], deadline: Deadline, expired: Expired) -> Iterator[T]:
    """The items of a blocking ``iterator``, read in a worker thread so a stall cannot pass the deadline.

    When the caller stops early or the deadline passes, the worker closes the
    iterator after its current read returns (which the SDK timeout bounds).
    """
    pump = _Pump(iterator)
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
    """Reads a blocking iterator in a daemon thread into a queue."""

    def __init__(self, iterator: Iterator[Any]) -> None:
        self.iterator = iterator
        self.items: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        self.abandoned = threading.Event()
        threading.Thread(target=self._run, name="llmplex-stream-reader", daemon=True).start()

    def _run(self) -> None:
        try:
            for item in self.iterator:
                if self.abandoned.is_set():
                    break
                self.items.put((_ITEM, item))
            else:
                self.items.put((_END, None))
        except BaseException as exc:  # handed to the consumer thread, which raises it
            self.items.put((_FAILED, exc))
        if self.abandoned.is_set():
            close: Callable[[], Any] | None = getattr(self.iterator, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    close()
