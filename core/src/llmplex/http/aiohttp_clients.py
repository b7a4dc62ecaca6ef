"""The async httpx client of an official SDK on its aiohttp backend, for many requests in flight.

An ``httpx`` (or ``httpx2``) ``AsyncClient`` on its own transport spends most of
its CPU in the connection pool, ``h11`` and ``anyio``: with 64 requests in
flight it serves fewer requests per second than one request at a time would
suggest. The Stainless-generated SDKs (openai, anthropic) ship the same client
on an aiohttp transport (``DefaultAioHttpClient``, the SDK's ``[aiohttp]``
extra): still an httpx ``AsyncClient`` — event hooks, ``Request``, ``Response``,
the library's exceptions — whose sockets aiohttp drives. ``sdk_async_client``
builds it, holding to the llmplex deadline::

    http_client = sdk_async_client(openai)        # or anthropic
    client = openai.AsyncOpenAI(api_key=..., http_client=http_client)

When a test double has replaced how the library sends (respx, pytest-httpx, a
monkeypatched ``AsyncHTTPTransport``), the SDK's plain httpx client is built
instead, so the double sees every request as it would under the SDK.

httpx-aiohttp 0.2.0 (the transport of openai 2.x) reports a connection that
fails without timing out — refused, reset, closed by the server — as
``ConnectTimeout``; ``sdk_async_client`` applies to its exception table the
correction the anthropic SDK's vendored copy carries (``ConnectError``), so a
dead server stays a connection error, not a timeout.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from llmplex.http.clients import honour_deadline, http_library

__all__ = ["library_transport_replaced", "sdk_async_client"]

_POOLS = {"httpx": "httpcore", "httpx2": "httpcore2"}
"""The package whose connection pool each library's own transport sends through."""


def sdk_async_client(sdk: ModuleType) -> Any:
    """``sdk.DefaultAioHttpClient()`` holding to the deadline (``honour_deadline``); ``sdk.DefaultAsyncHttpxClient()``
    when ``library_transport_replaced`` says a test double stands in for the library's transport."""
    library = http_library(sdk.DefaultAsyncHttpxClient)
    if library_transport_replaced(library):
        return honour_deadline(sdk.DefaultAsyncHttpxClient())
    client = sdk.DefaultAioHttpClient()
    _correct_exception_table(sys.modules[type(client._transport).__module__], library)
    return honour_deadline(client)


def library_transport_replaced(library: ModuleType) -> bool:
    """Whether something outside ``library`` (``httpx`` or ``httpx2``) replaced how its own async transport sends:
    its ``AsyncHTTPTransport`` or its connection pool's ``handle_async_request`` (what respx, pytest-httpx and
    monkeypatching fixtures patch)."""
    pool_package = sys.modules.get(_POOLS.get(library.__name__, ""))
    senders = [library.AsyncHTTPTransport.handle_async_request]
    if pool_package is not None:
        senders.append(pool_package.AsyncConnectionPool.handle_async_request)
    owners = {library.__name__, _POOLS.get(library.__name__)}
    return any(str(getattr(sender, "__module__", "")).partition(".")[0] not in owners for sender in senders)


def _correct_exception_table(transport_module: ModuleType, library: ModuleType) -> None:
    """Map aiohttp's connection errors that are not timeouts to ``ConnectError`` in httpx-aiohttp's table."""
    import aiohttp  # the SDK's aiohttp client is built: aiohttp is imported already

    table = getattr(transport_module, "AIOHTTP_EXC_MAP", None)
    if isinstance(table, dict) and table.get(aiohttp.ClientConnectionError) is library.ConnectTimeout:
        table[aiohttp.ClientConnectionError] = library.ConnectError
        table[aiohttp.ConnectionTimeoutError] = library.ConnectTimeout
