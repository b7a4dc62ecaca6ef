"""One object per event loop (a Redis client, a connection pool), closed while its loop still runs.

An async client's connections belong to the loop that opened them, so each
loop gets its own, built on first use there. It is closed when ``asyncio.run``
(or ``loop.shutdown_asyncgens()``) shuts the loop down — an async generator
started on the loop, which the loop finalizes then, closes it — or earlier by
``close()``/``aclose()``. Left to the garbage collector after its loop
closed, it would print "Event loop is closed" or leak its sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["CLOSE_WAIT", "PerLoop"]

T = TypeVar("T")

CLOSE_WAIT = 5.0
"""Seconds ``close()`` waits for an object on another thread's loop to close."""

_closing: set[asyncio.Task[None]] = set()  # close tasks scheduled on a loop, kept alive until done


@dataclass(frozen=True)
class _Entry(Generic[T]):
    value: T
    closer: AsyncGenerator[None, None]  # closes the value when the loop shuts its async generators down


class PerLoop(Generic[T]):
    """``create()``'s object for each running event loop, closed with ``aclose_one(value)`` on that loop
    (which must not raise: log what fails)."""

    def __init__(self, create: Callable[[], T], aclose_one: Callable[[T], Awaitable[None]]) -> None:
        self._create = create
        self._aclose_one = aclose_one
        self._entries: dict[asyncio.AbstractEventLoop, _Entry[T]] = {}
        self._lock = threading.Lock()

    def get(self, loop: asyncio.AbstractEventLoop | None = None) -> T:
        """The running loop's object (built on first use); call from async code. ``loop``: the running loop, where
        the caller has it already."""
        if loop is None:
            loop = asyncio.get_running_loop()
        entry = self._entries.get(loop)
        if entry is None:
            with self._lock:
                entry = self._entries.get(loop)
                if entry is None:
                    for dead in [other for other in self._entries if other.is_closed()]:
                        del self._entries[dead]  # closed without shutting down: nothing can close it now
                    value = self._create()
                    entry = self._entries[loop] = _Entry(value, self._closer(loop, value))
        return entry.value

    def __len__(self) -> int:
        return len(self._entries)

    def _closer(self, loop: asyncio.AbstractEventLoop, value: T) -> AsyncGenerator[None, None]:
        """An async generator, started on ``loop``, whose ``aclose()`` closes ``value`` (the loop keeps a weak
        reference to it and closes it at shutdown; ``_Entry`` holds the strong one)."""

        async def close_at_shutdown() -> AsyncGenerator[None, None]:
            try:
                yield
            finally:
                with self._lock:
                    entry = self._entries.get(loop)
                    if entry is not None and entry.value is value:
                        del self._entries[loop]
                await self._aclose_one(value)  # it logs its own failures

        closer = close_at_shutdown()
        with contextlib.suppress(StopIteration):
            closer.asend(None).send(None)  # runs to the ``yield``: nothing in between awaits
        return closer

    def _take(self) -> dict[asyncio.AbstractEventLoop, _Entry[T]]:
        with self._lock:
            entries, self._entries = self._entries, {}
        return entries

    def close(self) -> None:
        """Close every object on its loop: the running one once control returns to it, another thread's
        running loop within ``CLOSE_WAIT`` seconds; one of a loop that is not running is left to its shutdown."""
        here = _running_loop_or_none()
        for loop, entry in self._take().items():
            if loop.is_closed():
                continue
            if loop is here:
                task = loop.create_task(_finish(entry.closer))
                _closing.add(task)
                task.add_done_callback(_closing.discard)
            elif loop.is_running():
                with contextlib.suppress(Exception):
                    asyncio.run_coroutine_threadsafe(_finish(entry.closer), loop).result(CLOSE_WAIT)

    async def aclose(self) -> None:
        """Close every object, awaiting those of the running loop and of loops running on other threads."""
        here = asyncio.get_running_loop()
        for loop, entry in self._take().items():
            if loop is here:
                await entry.closer.aclose()
            elif loop.is_running():
                with contextlib.suppress(Exception):
                    closing = asyncio.run_coroutine_threadsafe(_finish(entry.closer), loop)
                    await asyncio.wait_for(asyncio.wrap_future(closing), CLOSE_WAIT)


async def _finish(closer: AsyncGenerator[None, None]) -> None:
    await closer.aclose()


def _running_loop_or_none() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
