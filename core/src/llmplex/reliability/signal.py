"""Wake whoever waits for shared state to change: threads (a condition) and asyncio tasks on any loop."""

from __future__ import annotations

import asyncio
import contextlib
import threading

__all__ = ["Changes"]


class Changes:
    """A version number bumped by ``notify``; waiters block until it moves past the one they saw.

    The owner guards its state with ``lock`` and calls ``notify`` while holding it.
    """

    def __init__(self, lock: threading.Lock | threading.RLock | None = None) -> None:
        self.lock = lock or threading.Lock()
        self._condition = threading.Condition(self.lock)
        self.version = 0
        self._async_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def notify(self) -> None:
        """Bump the version and wake every waiter (call with ``lock`` held)."""
        self.version += 1
        self._condition.notify_all()
        for loop, waiter in self._async_waiters:
            with contextlib.suppress(RuntimeError):  # that loop is closed: its waiter is gone with it
                loop.call_soon_threadsafe(_wake, waiter)
        self._async_waiters.clear()

    def wait(self, version: int, timeout: float | None) -> None:
        """Block until the version moves past ``version``, or ``timeout`` seconds pass."""
        with self.lock:
            if self.version == version:
                self._condition.wait(timeout)

    async def await_change(self, version: int, timeout: float | None) -> None:
        """Async ``wait``: the event loop keeps running meanwhile."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        with self.lock:
            if self.version != version:
                return
            self._async_waiters.append((loop, waiter))
        try:
            async with asyncio.timeout(timeout):
                await waiter
        except TimeoutError:
            pass
        finally:
            with self.lock:
                if (loop, waiter) in self._async_waiters:
                    self._async_waiters.remove((loop, waiter))


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
