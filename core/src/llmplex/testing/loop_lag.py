"""Catch code that blocks the event loop: a heartbeat task measures how late the loop wakes it."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from types import TracebackType

__all__ = ["LoopLag"]

_SCHEDSTAT = "/proc/thread-self/schedstat"


def _queued() -> float | None:
    """Seconds this thread has waited for a CPU so far (Linux; ``None`` where the kernel does not say)."""
    try:
        with open(_SCHEDSTAT, "rb") as stats:
            return int(stats.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


class LoopLag:
    """``async with LoopLag() as lag: ...`` then ``lag.worst``: the longest the loop was held, in seconds.

    A heartbeat sleeps ``tick`` seconds at a time and records how much later than
    asked the loop woke it. Awaiting sockets keeps that near zero; a blocking call
    (sync HTTP, ``time.sleep``) inside a coroutine holds the whole loop and shows
    up as lag as long as the call. The time the loop's thread waited for a CPU
    (Linux's run-queue time) is left out: a busy machine delays every loop, and
    that is no code's doing.

    The objects alive on entry are frozen (``gc.freeze``) until exit, unless
    something else froze objects first: a garbage collection in the block then
    walks only what was made since. On a large heap (a test process that has
    imported every SDK) one full collection holds the GIL, and with it every
    loop of the process, for a second or more whichever thread it ran in; that
    is the collector's doing, not the code under test's.
    """

    def __init__(self, tick: float = 0.01) -> None:
        self.tick = tick
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None
        self._froze = False

    async def _beat(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            asked, queued = loop.time() + self.tick, _queued()
            await asyncio.sleep(self.tick)
            now, waited = loop.time(), _queued()
            # the CPU wait is left out only where both readings were had: a reading that failed (a process out of
            # file descriptors, a kernel without schedstat) must not make a held loop look free
            lag = now - asked if queued is None or waited is None else now - asked - (waited - queued)
            self.worst = max(self.worst, lag)

    async def __aenter__(self) -> LoopLag:
        self._froze = gc.get_freeze_count() == 0
        if self._froze:
            gc.freeze()
        self._task = asyncio.create_task(self._beat())
        await asyncio.sleep(0)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._task is not None
        try:
            await asyncio.sleep(self.tick)  # a block that ended the block is measured too
        finally:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            if self._froze:
                gc.unfreeze()
