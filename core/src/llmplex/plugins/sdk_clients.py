"""The SDK clients of one provider instance: built on first use, async ones per event loop, closed together.

An async SDK client's connections belong to the event loop that opened them,
so each loop gets its own client, and the client is closed while its loop
still runs: when ``asyncio.run`` (or ``loop.shutdown_asyncgens()``) shuts the
loop down, or earlier by ``Client.close()``/``aclose()``. A client left to the
garbage collector after its loop closed would print "Event loop is closed".
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import threading
from collections.abc import AsyncGenerator, Awaitable
from dataclasses import dataclass
from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.provider import ProviderInfo, ProviderSettings

__all__ = ["SDKClients"]

logger = logging.getLogger("llmplex")

CLOSE_WAIT = 5.0
"""Seconds ``close()`` waits for a client on another thread's loop to close."""

_closing: set[asyncio.Task[None]] = set()  # close tasks scheduled on a loop, kept alive until done


@dataclass(frozen=True)
class _LoopClient:
    client: Any
    closer: AsyncGenerator[None, None]  # closes the client when the loop shuts its async generators down


class SDKClients:
    """``ProviderInfo.create_client``'s client and ``create_async_client``'s, one per event loop."""

    def __init__(self, info: ProviderInfo, settings: ProviderSettings) -> None:
        self.info = info
        self.settings = settings
        self._sync: list[Any] = []
        self._async: dict[asyncio.AbstractEventLoop, _LoopClient] = {}
        self._lock = threading.Lock()

    def get(self, asynchronous: bool) -> Any:
        """The sync client, or the async one of the running loop (the sync one when the plugin has none)."""
        if asynchronous and self.info.create_async_client is not None:
            return self._for_loop(_running_loop())
        try:
            return self._sync[0]
        except IndexError:
            pass
        with self._lock:
            if not self._sync:
                factory = self.info.create_client
                self._sync.append(factory(self.settings) if factory else None)
            return self._sync[0]

    def _for_loop(self, loop: asyncio.AbstractEventLoop) -> Any:
        entry = self._async.get(loop)
        if entry is None:
            with self._lock:
                entry = self._async.get(loop)
                if entry is None:
                    for dead in [other for other in self._async if other.is_closed()]:
                        del self._async[dead]  # closed without shutting down: nothing can close it now
                    assert self.info.create_async_client is not None
                    client = self.info.create_async_client(self.settings)
                    entry = self._async[loop] = _LoopClient(client, self._closer(loop, client))
        return entry.client

    def _closer(self, loop: asyncio.AbstractEventLoop, client: Any) -> AsyncGenerator[None, None]:
        """An async generator, started on ``loop``, whose ``aclose()`` closes ``client``.

        Started here, the loop tracks it and closes it when it shuts down (the
        loop keeps only a weak reference: ``_LoopClient`` holds the strong one).
        """

        async def close_at_shutdown() -> AsyncGenerator[None, None]:
            try:
                yield
            finally:
                with self._lock:
                    if self._async.get(loop, None) is not None and self._async[loop].client is client:
                        del self._async[loop]
                await self._aclose_client(client)

        closer = close_at_shutdown()
        with contextlib.suppress(StopIteration):
            closer.asend(None).send(None)  # runs to the ``yield``: nothing in between awaits
        return closer

    # -- closing -----------------------------------------------------------------------

    def close(self) -> None:
        """Close every client: the sync one here, each async one on its loop (skipped if that loop is closed)."""
        sync, entries = self._take()
        for client in sync:
            self._close_sync(client)
        here = _running_loop_or_none()
        for loop, entry in entries.items():
            if loop.is_closed():
                continue
            if loop is here:  # a sync close() inside async code: close once control returns to the loop
                task = loop.create_task(_finish(entry.closer))
                _closing.add(task)
                task.add_done_callback(_closing.discard)
            elif loop.is_running():
                with contextlib.suppress(Exception):
                    asyncio.run_coroutine_threadsafe(_finish(entry.closer), loop).result(CLOSE_WAIT)

    async def aclose(self) -> None:
        """Close every client, awaiting those of the running loop and of loops running on other threads."""
        sync, entries = self._take()
        for client in sync:
            self._close_sync(client)
        here = asyncio.get_running_loop()
        for loop, entry in entries.items():
            if loop is here:
                await entry.closer.aclose()
            elif loop.is_running():
                with contextlib.suppress(Exception):
                    closing = asyncio.run_coroutine_threadsafe(_finish(entry.closer), loop)
                    await asyncio.wait_for(asyncio.wrap_future(closing), CLOSE_WAIT)

    def _take(self) -> tuple[list[Any], dict[asyncio.AbstractEventLoop, _LoopClient]]:
        """Every client, forgotten here: the next use builds new ones."""
        with self._lock:
            sync, self._sync = [c for c in self._sync if c is not None], []
            entries, self._async = self._async, {}
        return sync, entries

    def _close_sync(self, client: Any) -> None:
        try:
            closing = self._close_call(client, asynchronous=False)
            if inspect.iscoroutine(closing):  # a sync client whose close() is async: not ours to run
                closing.close()
        except Exception as exc:
            logger.warning("closing the %s client failed: %s: %s", self.info.name, type(exc).__name__, exc)

    async def _aclose_client(self, client: Any) -> None:
        try:
            closing = self._close_call(client, asynchronous=True)
            if inspect.isawaitable(closing):
                await closing
        except Exception as exc:
            logger.warning("closing the %s async client failed: %s: %s", self.info.name, type(exc).__name__, exc)

    def _close_call(self, client: Any, asynchronous: bool) -> Awaitable[None] | None:
        """``ProviderInfo.close_client(client)``, else the client's own ``aclose()`` (async) or ``close()``."""
        if self.info.close_client is not None:
            return self.info.close_client(client)
        close = (getattr(client, "aclose", None) if asynchronous else None) or getattr(client, "close", None)
        return close() if callable(close) else None


async def _finish(closer: AsyncGenerator[None, None]) -> None:
    await closer.aclose()


def _running_loop() -> asyncio.AbstractEventLoop:
    loop = _running_loop_or_none()
    if loop is None:
        raise LLMConfigurationError(
            "an async SDK client belongs to an event loop: ask for it from async code (inside a running loop)"
        )
    return loop


def _running_loop_or_none() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
