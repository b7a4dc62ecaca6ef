"""Build and close the SDK clients of one provider instance: httpx2 on both paths, retries off, the deadline held.

The async client's ``httpx2.AsyncClient`` sends through aiohttp (httpx-aiohttp's ``httpx2`` transport, built by
``llmplex.http.sdk_async_client`` as the openai and anthropic plugins' are): with many requests in flight httpx2's
own connection pool spends most of a call scanning its connections. It is still an ``httpx2`` client (its
requests, responses and exceptions), and the lean calls post straight on its aiohttp session
(``llmplex.http.direct_sender``).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Awaitable
from types import SimpleNamespace
from typing import Any

import httpx2
from google import genai
from google.genai import types

from llmplex.errors import LLMConfigurationError
from llmplex.http import sdk_async_client, sync_client
from llmplex_gemini.settings import GeminiSettings

__all__ = [
    "LOCAL_PLACEHOLDER_KEY",
    "close_client",
    "create_async_client",
    "create_client",
    "lean_capable",
    "timeout_millis",
]

LOCAL_PLACEHOLDER_KEY = "llmplex-local-no-key"
"""Sent to a ``base_url`` server configured without a key."""


def timeout_millis(seconds: float) -> int:
    """The SDK's timeout unit: whole milliseconds, at least one."""
    return max(int(seconds * 1000), 1)


def _client(settings: GeminiSettings, **transport: Any) -> genai.Client:
    if settings.api_key is not None:
        key = settings.api_key.get_secret_value()
    elif settings.base_url is not None:
        key = LOCAL_PLACEHOLDER_KEY
    else:
        raise LLMConfigurationError(
            "no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or api_key in the provider's config table"
        )
    options = types.HttpOptions(
        base_url=settings.base_url,
        timeout=None if settings.timeout is None else timeout_millis(settings.timeout),
        retry_options=types.HttpRetryOptions(attempts=1),
        **transport,
    )
    return genai.Client(vertexai=False, api_key=key, http_options=options)


# The SDK leaves the httpx2 clients it is given open: each SDK client's own, closed by close_client.
_http_clients: weakref.WeakKeyDictionary[genai.Client, Any] = weakref.WeakKeyDictionary()


def create_client(settings: GeminiSettings) -> genai.Client:
    """The sync SDK client (``client.models``); its requests hold to the call's deadline."""
    http = sync_client(httpx2, follow_redirects=True)
    client = _client(settings, httpx_client=http)
    _http_clients[client] = http
    return client


class _AsyncHttpxClient(httpx2.AsyncClient):
    """httpx2's own async client, following redirects as the SDK's does."""

    def __init__(self) -> None:
        super().__init__(follow_redirects=True)


@functools.cache
def _clients() -> SimpleNamespace:
    """What ``sdk_async_client`` builds from, as it builds a Stainless SDK's clients (aiohttp imported on first use)."""
    from httpx_aiohttp.httpx2 import Httpx2AiohttpClient

    class AioHttpClient(Httpx2AiohttpClient):
        """``_AsyncHttpxClient`` on httpx-aiohttp's transport."""

        def __init__(self) -> None:
            super().__init__(follow_redirects=True)

    return SimpleNamespace(DefaultAsyncHttpxClient=_AsyncHttpxClient, DefaultAioHttpClient=AioHttpClient)


def create_async_client(settings: GeminiSettings) -> genai.Client:
    """The client whose ``.aio`` serves async calls (one per event loop): the SDK on an ``httpx2`` client sending
    through aiohttp (httpx2's own transport when a test double stands in for it), not the SDK's own aiohttp path."""
    http = sdk_async_client(_clients())  # type: ignore[arg-type]
    client = _client(settings, httpx_async_client=http)
    _http_clients[client] = http
    return client


def lean_capable(client: Any, *, is_async: bool) -> bool:
    """Whether ``client`` is one of ours (Gemini API key, the ``httpx2`` client built for it): its streams may
    take ``llmplex_gemini.lean``."""
    try:
        http = _http_clients.get(client)
    except TypeError:  # not weakly referenceable: not a client of ours
        return False
    if http is None or client.vertexai:
        return False
    api = client._api_client
    return http is (api._async_httpx_client if is_async else api._httpx_client)


def close_client(client: genai.Client) -> Awaitable[None] | None:
    """Close the SDK client and its httpx2 client (``ProviderInfo.close_client``)."""
    http = _http_clients.pop(client, None)
    if isinstance(http, httpx2.AsyncClient):
        return _aclose(client, http)
    client.close()
    if http is not None:
        http.close()
    return None


async def _aclose(client: genai.Client, http: httpx2.AsyncClient) -> None:
    await client.aio.aclose()
    await http.aclose()
