"""httpx clients that hold every request to the deadline of the llmplex call sending it.

An SDK's timeout bounds each socket read, so a server that sends a byte every
few seconds keeps a plain client reading for minutes. A client passed through
``honour_deadline`` reads the call's deadline
(``current_deadline``, set by core around
every I/O hook) on each request: connect, write and read timeouts become at
most the time left, and reading the response body past the deadline raises
the library's ``ReadTimeout`` (core reports it as ``LLMDeadlineExceededError``).
Requests made outside an llmplex call are untouched.

Works with ``httpx`` and its fork ``httpx2`` (which the anthropic and
google-genai SDKs use), sync and async, with any transport, proxy or mock.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar, overload

from llmplex.errors import LLMConfigurationError
from llmplex.reliability.deadline import Deadline, current_deadline

if TYPE_CHECKING:
    import httpx

__all__ = ["async_client", "honour_deadline", "http_library", "is_blocking_client", "sync_client"]

ClientT = TypeVar("ClientT")

_PHASES = ("connect", "read", "write", "pool")
_LATE = "the response was still arriving when the call's deadline passed (the server sends it too slowly)"


@overload
def sync_client(http: None = None, **kwargs: Any) -> httpx.Client: ...
@overload
def sync_client(http: ModuleType, **kwargs: Any) -> Any: ...
def sync_client(http: ModuleType | None = None, **kwargs: Any) -> Any:
    """``httpx.Client(**kwargs)`` (or ``http.Client``, e.g. with ``http=httpx2``) holding to the deadline."""
    return honour_deadline((http or importlib.import_module("httpx")).Client(**kwargs))


@overload
def async_client(http: None = None, **kwargs: Any) -> httpx.AsyncClient: ...
@overload
def async_client(http: ModuleType, **kwargs: Any) -> Any: ...
def async_client(http: ModuleType | None = None, **kwargs: Any) -> Any:
    """``httpx.AsyncClient(**kwargs)`` (or ``http.AsyncClient``) holding to the deadline.

    Build one per event loop: ``ProviderInfo.create_async_client`` is called once per loop.
    """
    return honour_deadline((http or importlib.import_module("httpx")).AsyncClient(**kwargs))


def honour_deadline(client: ClientT) -> ClientT:
    """Make ``client`` (an httpx or httpx2 ``Client``/``AsyncClient``, an SDK's subclass too) hold to the deadline.

    Adds two event hooks, once: one caps each request's timeouts at the time
    left, one bounds the reading of each response. Returns ``client``.
    """
    http, asynchronous = _flavour(client)
    hooks = _hooks(http)
    request_hook, response_hook = (hooks.aclamp, hooks.awrap) if asynchronous else (hooks.clamp, hooks.wrap)
    event_hooks = client.event_hooks  # type: ignore[attr-defined]
    if request_hook not in event_hooks["request"]:
        event_hooks["request"].append(request_hook)
        event_hooks["response"].append(response_hook)
    return client


def is_blocking_client(client: object) -> bool:
    """Whether ``client`` is a sync httpx or httpx2 ``Client`` (an SDK's subclass too), whose I/O blocks."""
    found = _found_flavour(client)
    return found is not None and not found[1]


def _found_flavour(client: object) -> tuple[ModuleType, bool] | None:
    return _class_flavour(client if isinstance(client, type) else type(client))


@functools.lru_cache(maxsize=256)
def _class_flavour(kind: type) -> tuple[ModuleType, bool] | None:
    """Worked out once per class (asked on every call): a class's library is imported while the class exists."""
    for cls in kind.__mro__:
        module = sys.modules.get(cls.__module__.partition(".")[0])
        if cls.__name__ in ("Client", "AsyncClient") and getattr(module, cls.__name__, None) is cls:
            assert module is not None
            return module, cls.__name__ == "AsyncClient"
    return None


def http_library(client: object) -> ModuleType:
    """The library an httpx-style ``client`` (or client class) comes from (``httpx`` or ``httpx2``), e.g. for its
    exception classes."""
    return _flavour(client)[0]


def _flavour(client: object) -> tuple[ModuleType, bool]:
    """The library ``client`` comes from (httpx, httpx2) and whether it is async."""
    found = _found_flavour(client)
    if found is not None:
        return found
    raise LLMConfigurationError(
        f"honour_deadline() takes an httpx or httpx2 Client or AsyncClient, got {type(client).__name__}"
    )


@functools.cache
def _hooks(http: ModuleType) -> _Hooks:
    return _Hooks(
        http,
        type("DeadlineByteStream", (_BoundStream, http.SyncByteStream), {}),
        type("AsyncDeadlineByteStream", (_AsyncBoundStream, http.AsyncByteStream), {}),
    )


@dataclass(frozen=True)
class _Hooks:
    """The event hooks for one library's clients, and its byte-stream classes bound to a deadline."""

    http: ModuleType
    stream: type[_BoundStream]
    astream: type[_AsyncBoundStream]

    def clamp(self, request: Any) -> None:
        """Cap the request's connect/read/write/pool timeouts at the time left."""
        deadline = current_deadline()
        if deadline is None:
            return
        remaining = deadline.remaining()
        if remaining <= 0:
            raise self.http.ConnectTimeout("the call's deadline passed before the request was sent", request=request)
        timeouts = request.extensions.get("timeout") or {}
        request.extensions["timeout"] = {
            phase: remaining if timeouts.get(phase) is None else min(timeouts[phase], remaining) for phase in _PHASES
        }

    def wrap(self, response: Any) -> None:
        """Bound the reading of the response body by the deadline."""
        deadline = current_deadline()
        if deadline is not None:
            response.stream = self.stream(response.stream, deadline, self._late(response))

    async def aclamp(self, request: Any) -> None:
        """Async twin of ``clamp``."""
        self.clamp(request)

    async def awrap(self, response: Any) -> None:
        """Async twin of ``wrap``."""
        deadline = current_deadline()
        if deadline is not None:
            response.stream = self.astream(response.stream, deadline, self._late(response))

    def _late(self, response: Any) -> Callable[[], Exception]:
        return lambda: self.http.ReadTimeout(_LATE, request=response.request)


class _BoundStream:
    """A response byte stream that raises ``late()`` instead of reading past the deadline."""

    def __init__(self, inner: Any, deadline: Deadline, late: Callable[[], Exception]) -> None:
        self._inner = inner
        self._deadline = deadline
        self._late = late

    def __iter__(self) -> Iterator[bytes]:
        chunks = iter(self._inner)
        while True:
            if self._deadline.expired:
                raise self._late()
            chunk = next(chunks, None)
            if chunk is None:
                return
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _AsyncBoundStream:
    """Async twin of ``_BoundStream``: a read still waiting at the deadline is cancelled."""

    def __init__(self, inner: Any, deadline: Deadline, late: Callable[[], Exception]) -> None:
        self._inner = inner
        self._deadline = deadline
        self._late = late

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = aiter(self._inner)
        while True:
            scope = asyncio.timeout(self._deadline.remaining())
            try:
                async with scope:
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                return
            except TimeoutError:
                if scope.expired():
                    raise self._late() from None
                raise
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()
