"""Async ConverseStream: the lean request (``llmplex_bedrock.direct``) sent on aiohttp, its stream read in the loop.

boto3 has no async client, so async streams used to run on core's worker
threads, a thread hop per event. The boto3 client still validates, serializes
and signs (``LeanRequest.sign``, CPU only); the request goes out on an httpx
``AsyncClient`` on httpx-aiohttp's transport, one per event loop
(``HttpxSender.async_http``, built by ``llmplex.http.sdk_async_client``: the
deadline held on every read, aiohttp's failures as httpx's exceptions, as the
sync sender's are). ``aopen`` sends the signed request with the headers and body
the sync ``HttpxSender`` would hand httpx, raises an error status as boto3's
``ClientError`` (``direct.raise_for_status``) and reads the event stream with
``lean.aread_events``. Whatever the lean request does not cover is read
through boto3 on worker threads (``athreaded``), as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import httpx
from botocore.awsrequest import AWSResponse

from llmplex.http import sdk_async_client
from llmplex.reliability.deadline import Deadline, current_deadline
from llmplex_bedrock.direct import LeanRequest, raise_for_status
from llmplex_bedrock.tls import ssl_context

__all__ = ["Opened", "aclose_http", "aopen", "async_http", "athreaded"]

logger = logging.getLogger("llmplex")


@functools.cache
def _clients() -> SimpleNamespace:
    """What ``sdk_async_client`` builds from (aiohttp imported on first use)."""
    from httpx_aiohttp import HttpxAiohttpClient

    def aiohttp_client() -> HttpxAiohttpClient:
        return HttpxAiohttpClient(verify=ssl_context())  # the plugin's one context, not a CA bundle loaded per loop

    return SimpleNamespace(DefaultAsyncHttpxClient=httpx.AsyncClient, DefaultAioHttpClient=aiohttp_client)


def async_http() -> httpx.AsyncClient:
    """An httpx ``AsyncClient`` on aiohttp holding to the deadline (httpx's own transport under a test double)."""
    client: httpx.AsyncClient = sdk_async_client(_clients())  # type: ignore[arg-type]
    return client


async def aclose_http(http: httpx.AsyncClient) -> None:
    """Close an ``async_http`` client on its loop (a failure logged: ``PerLoop`` closers must not raise)."""
    try:
        await http.aclose()
    except Exception as exc:
        logger.warning("closing the bedrock async client failed: %s: %s", type(exc).__name__, exc)


class _Read:
    """The ``raw`` of an error answer already read: what ``AWSResponse.content`` reads."""

    def __init__(self, content: bytes) -> None:
        self._content = content

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._content


@dataclass(frozen=True)
class Opened:
    """An open 2xx event-stream answer: its body's chunks (each read held to the deadline) and its closing."""

    chunks: AsyncIterator[bytes]
    aclose: Callable[[], Awaitable[None]]


async def aopen(lean: LeanRequest, http: httpx.AsyncClient, payload: dict[str, Any], seconds: float) -> Opened:
    """Send ``converse_stream(**payload)``'s request; the open 2xx answer, or boto3's error raised.

    On httpx-aiohttp's transport the request goes straight to its aiohttp session with the URL as botocore
    encoded and signed it (``str(url)`` handed to aiohttp would be re-normalized by yarl: ``%3A`` in a model id
    sent as ``:``, a path the signature does not cover); on any other transport, through httpx.
    """
    method, url, headers, body = lean.sign(payload)
    request = http.build_request(
        method,
        url,
        headers=[(str(name), _text(value)) for name, value in headers.items()],
        content=_body(body),
        timeout=httpx.Timeout(seconds),
    )
    transport = getattr(http, "_transport", None)
    module = sys.modules.get(type(transport).__module__)
    aiohttp_transport = getattr(module, "AiohttpTransport", None)
    if aiohttp_transport is not None and isinstance(transport, aiohttp_transport) and transport.proxy is None:
        return await _on_aiohttp(lean, transport, request, seconds)
    response = await http.send(request, stream=True)
    if response.status_code >= 300:
        try:
            content = await response.aread()
        finally:
            await response.aclose()
        _raise(lean, request, response.status_code, response.headers.multi_items(), content)
    return Opened(response.aiter_bytes(), response.aclose)


def _raise(lean: LeanRequest, request: httpx.Request, status: int, headers: Any, content: bytes) -> None:
    """boto3's error for an answer of status 300 or more, its headers as httpx reads them (``dict(headers)``:
    names lowercased, repeats joined)."""
    merged: dict[str, str] = {}
    for name, value in headers:
        key = name.lower()
        merged[key] = f"{merged[key]}, {value}" if key in merged else value
    answer: Any = merged
    raise_for_status(lean.client, lean.operation, AWSResponse(str(request.url), status, answer, _Read(content)))


_LATE = "the event stream was still arriving when the call's deadline passed"


@contextlib.contextmanager
def _mapped(request: httpx.Request) -> Iterator[None]:
    """aiohttp's failures as httpx-aiohttp's transport reports them, the request attached as httpx does."""
    from httpx_aiohttp.transport import map_aiohttp_exceptions

    try:
        with map_aiohttp_exceptions():
            yield
    except httpx.RequestError as error:
        error.request = request
        raise


async def _on_aiohttp(lean: LeanRequest, transport: Any, request: httpx.Request, seconds: float) -> Opened:
    import aiohttp
    import yarl

    deadline = current_deadline()
    if deadline is not None:
        remaining = deadline.remaining()
        if remaining <= 0:
            raise httpx.ConnectTimeout("the call's deadline passed before the request was sent", request=request)
        seconds = min(seconds, remaining)
    session = transport.client
    if not isinstance(session, aiohttp.ClientSession):
        session = transport.client = transport.get_client()
    with _mapped(request):
        response = await session.request(
            "POST",
            yarl.URL(str(request.url), encoded=True),
            headers=request.headers,
            data=request.content,
            allow_redirects=False,
            auto_decompress=False,
            compress=False,
            timeout=aiohttp.ClientTimeout(sock_connect=seconds, sock_read=seconds, connect=seconds),
        )
    chunks = _chunks(response, deadline, request)
    if response.status >= 300:
        try:
            content = b"".join([chunk async for chunk in chunks])
        finally:
            response.close()
        _raise(lean, request, response.status, response.headers.items(), content)

    async def aclose() -> None:
        if response.content.at_eof():
            response.release()
        else:
            response.close()

    return Opened(chunks, aclose)


async def _chunks(response: Any, deadline: Deadline | None, request: httpx.Request) -> AsyncIterator[bytes]:
    """The body's chunks as they arrive; ``ReadTimeout`` when a read is still waiting at the deadline."""
    read = response.content.readany
    while True:
        scope = None if deadline is None else asyncio.timeout(deadline.remaining())
        try:
            with _mapped(request):
                if scope is None:
                    chunk = await read()
                else:
                    async with scope:
                        chunk = await read()
        except httpx.TimeoutException:
            if scope is not None and scope.expired():
                raise httpx.ReadTimeout(_LATE, request=request) from None
            raise
        if not chunk:
            return
        yield chunk


_DONE = object()


async def athreaded(opening: Callable[[], Iterator[Any]]) -> AsyncIterator[Any]:
    """A blocking iterator opened on a worker thread now; its items pulled on worker threads (the context of each
    step copied: the deadline, the call's timeout)."""
    return _pulled(await asyncio.to_thread(opening))


async def _pulled(iterator: Iterator[Any]) -> AsyncIterator[Any]:
    try:
        while (item := await asyncio.to_thread(next, iterator, _DONE)) is not _DONE:
            yield item
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            with contextlib.suppress(ValueError):  # still running on its thread (cancelled mid-read): ends with it
                close()


def _body(body: Any) -> bytes:
    """The serialized body as the sync sender sends it (a file-like body read whole)."""
    if hasattr(body, "read"):
        body = body.read()
    return bytes(body or b"")


def _text(value: Any) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)
