"""botocore requests sent through llmplex's deadline-holding httpx client.

botocore builds and SigV4-signs each request; its ``before-send`` event hands the
signed request to ``HttpxSender``, which sends it with a client from
``llmplex.http`` (connect, write and every read bounded by the call's deadline,
and by the per-call ``timeout`` core passes to the hooks) and gives botocore the
answer to parse, event streams included. botocore's own urllib3 pool, whose
timeouts are fixed when the client is built, is never used. Async streams send
on ``HttpxSender.async_http()``: an httpx ``AsyncClient`` on aiohttp per event
loop (``llmplex_bedrock.aio``), closed on its loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import httpx
from botocore.awsrequest import AWSResponse

from llmplex.http import sync_client
from llmplex.reliability.per_loop import PerLoop

__all__ = ["HttpxSender", "call_timeout"]

_timeout: ContextVar[float | None] = ContextVar("llmplex_bedrock_timeout", default=None)


@contextlib.contextmanager
def call_timeout(seconds: float | None) -> Iterator[None]:
    """Requests sent inside give up after ``seconds`` per connect/read/write (``None``: the client's own)."""
    token = _timeout.set(seconds)
    try:
        yield
    finally:
        _timeout.reset(token)


class _Body:
    """The ``raw`` botocore reads a body from: ``stream()`` yields its bytes, ``close()`` ends it."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    def stream(self, **_: Any) -> Iterator[bytes]:
        try:
            yield from self._response.iter_bytes()
        finally:
            self._response.close()

    def close(self) -> None:
        self._response.close()


class HttpxSender:
    """A ``before-send`` handler: sends botocore's signed request with httpx and returns the answer."""

    def __init__(self, default_timeout: float) -> None:
        self.default_timeout = default_timeout
        """Seconds per connect/read/write when the call sets none."""
        self.http = sync_client(httpx)
        self._async: PerLoop[httpx.AsyncClient] | None = None

    def __call__(self, request: Any, **_: Any) -> AWSResponse:
        seconds = _timeout.get() or self.default_timeout
        body = request.body
        if hasattr(body, "read"):
            body = body.read()
        outgoing = self.http.build_request(
            request.method,
            request.url,
            headers=[(str(name), _text(value)) for name, value in request.headers.items()],
            content=body or b"",
            timeout=httpx.Timeout(seconds),
        )
        response = self.http.send(outgoing, stream=True)
        if not request.stream_output:
            try:
                response.read()
            finally:
                response.close()
        headers: Any = dict(response.headers.items())  # AWSResponse wraps any mapping in its own HeadersDict
        return AWSResponse(request.url, response.status_code, headers, _Body(response))

    def async_http(self) -> httpx.AsyncClient:
        """The running event loop's httpx ``AsyncClient`` on aiohttp (built on first use there)."""
        if self._async is None:
            from llmplex_bedrock.aio import aclose_http, async_http

            self._async = PerLoop(async_http, aclose_http)
        return self._async.get()

    def close(self) -> None:
        """Close the httpx client, and each async one on its loop."""
        self.http.close()
        if self._async is not None:
            self._async.close()


def _text(value: Any) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)
