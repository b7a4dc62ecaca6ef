"""The SDK clients of one provider instance: built on first use, async ones per event loop, closed together.

An async SDK client's connections belong to the event loop that opened them,
so each loop gets its own client, and the client is closed while its loop
still runs: when ``asyncio.run`` (or ``loop.shutdown_asyncgens()``) shuts the
loop down, or earlier by ``Client.close()``/``aclose()``. A client left to the
garbage collector after its loop closed would print "Event loop is closed".
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Awaitable
from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.provider import ProviderInfo, ProviderSettings
from llmplex.reliability.per_loop import PerLoop

__all__ = ["SDKClients"]

logger = logging.getLogger("llmplex")


class SDKClients:
    """``ProviderInfo.create_client``'s client and ``create_async_client``'s, one per event loop."""

    def __init__(self, info: ProviderInfo, settings: ProviderSettings) -> None:
        self.info = info
        self.settings = settings
        self._sync: list[Any] = []
        self._async: PerLoop[Any] = PerLoop(self._create_async, self._aclose_client)
        self._lock = threading.Lock()

    def get(self, asynchronous: bool) -> Any:
        """The sync client, or the async one of the running loop (the sync one when the plugin has none)."""
        if asynchronous and self.info.create_async_client is not None:
            return self._async.get(_running_loop())
        try:
            return self._sync[0]
        except IndexError:
            pass
        with self._lock:
            if not self._sync:
                factory = self.info.create_client
                self._sync.append(factory(self.settings) if factory else None)
            return self._sync[0]

    def _create_async(self) -> Any:
        assert self.info.create_async_client is not None
        return self.info.create_async_client(self.settings)

    # -- closing -----------------------------------------------------------------------

    def close(self) -> None:
        """Close every client: the sync one here, each async one on its loop (skipped if that loop is closed)."""
        for client in self._take_sync():
            self._close_sync(client)
        self._async.close()

    async def aclose(self) -> None:
        """Close every client, awaiting those of the running loop and of loops running on other threads."""
        for client in self._take_sync():
            self._close_sync(client)
        await self._async.aclose()

    def _take_sync(self) -> list[Any]:
        """The sync client, forgotten here: the next use builds a new one."""
        with self._lock:
            sync, self._sync = [c for c in self._sync if c is not None], []
        return sync

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


def _running_loop() -> asyncio.AbstractEventLoop:
    """The running event loop; outside one, the typed error saying where to ask."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise LLMConfigurationError(
            "an async SDK client belongs to an event loop: ask for it from async code (inside a running loop)"
        ) from None
