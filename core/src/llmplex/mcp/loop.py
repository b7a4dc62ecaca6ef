"""The event loop the MCP sessions live on: one daemon thread per process, shared by sync and async callers.

The SDK's transports and sessions are anyio task groups, which must be entered
and left in one task of one loop; a sync ``complete()`` has no loop, and an
async caller's loop may end before the session does. So each session runs as
one long task on this loop, and callers hand it work with ``submit``.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["on_exit", "submit"]

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()
_exit_hooks: list[Callable[[], None]] = []


def _the_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="llmplex-mcp", daemon=True).start()
            _loop = loop
        return _loop


def submit(make: Callable[[], Awaitable[T]]) -> concurrent.futures.Future[T]:
    """Run ``make()`` on the MCP loop; cancelling the returned future cancels the task there."""

    async def run() -> T:
        return await make()

    return asyncio.run_coroutine_threadsafe(run(), _the_loop())


def on_exit(hook: Callable[[], None]) -> None:
    """Call ``hook`` at interpreter exit, before the loop's thread dies with the process."""
    with _lock:
        _exit_hooks.append(hook)


def _at_exit() -> None:
    for hook in reversed(_exit_hooks):
        try:
            hook()
        except Exception:
            continue


atexit.register(_at_exit)
