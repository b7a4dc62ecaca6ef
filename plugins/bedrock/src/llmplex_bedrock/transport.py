"""botocore requests sent through llmplex's deadline-holding httpx client.

botocore builds and SigV4-signs each request; its ``before-send`` event hands the
signed request to ``HttpxSender``, which sends it with a client from
``llmplex.http`` (connect, write and every read bounded by the call's deadline,
and by the per-call ``timeout`` core passes to the hooks) and gives botocore the
answer to parse, event streams included. botocore's own urllib3 pool, whose
timeouts are fixed when the client is built, is never used. Async streams send
on ``HttpxSender.async_http()``: an httpx ``AsyncClient`` on aiohttp per event
loop (``llmplex_bedrock.aio``), closed on its loop.

Two pieces of httpx's per-request work are done with less: the request is
built as ``Client.build_request`` builds it (the client's default headers
merged under botocore's, the timeout as an extension) straight into httpx's
``Request``, with the parsed URL kept per URL, while the client has no query
parameters or cookies to add (with any, ``build_request`` builds it), its
headers normalized once where ``Request(content=...)`` would normalize them
twice (the Host put first and the body read as it does, the length being
botocore's ``Content-Length``); and
the client's cookie jar is only asked to extract cookies from an answer that
sets some (``_Cookies``: an answer without ``Set-Cookie`` leaves the jar as it
was, so httpx's work on it, a ``urllib`` request and an ``email`` message per
answer, is skipped).

Every client, the sync ones and the async one of each event loop, verifies TLS
with one SSL context per process (``tls.ssl_context``): httpx's default one, built
once for the ``SSL_CERT_FILE``/``SSL_CERT_DIR`` it reads, where each httpx
client would load the CA bundle again (~50 ms of CPU for certifi's: every
``create_client``, and every event loop an async stream runs on).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

import httpx
from botocore.awsrequest import AWSResponse

from llmplex.http import sync_client
from llmplex.reliability.per_loop import PerLoop
from llmplex_bedrock.tls import ssl_context

__all__ = ["HttpxSender", "aws_response", "call_timeout", "raw_body"]

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


_URLS = 256
"""Parsed URLs kept per sender (one per model id sent): beyond, the cache starts again."""

_AUTO = frozenset({b"host", b"transfer-encoding"})
"""Header names (lowercase) with which ``Request(content=...)`` treats the headers otherwise: such a request is built
by it."""


class _Cookies(httpx.Cookies):
    """httpx's ``Cookies`` over the same jar, extracting cookies only from an answer with a ``Set-Cookie`` or
    ``Set-Cookie2`` header (the only ones the jar reads; with neither it takes nothing)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        """The jar's extraction, for an answer that sets cookies."""
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)


class HttpxSender:
    """A ``before-send`` handler: sends botocore's signed request with httpx and returns the answer."""

    def __init__(self, default_timeout: float) -> None:
        self.default_timeout = default_timeout
        """Seconds per connect/read/write when the call sets none."""
        self.http = sync_client(httpx, verify=ssl_context())
        self._async: PerLoop[httpx.AsyncClient] | None = None
        self._urls: dict[str, httpx.URL] = {}

    def __call__(self, request: Any, **_: Any) -> AWSResponse:
        response = self.send(request)
        if not request.stream_output:
            try:
                response.read()
            finally:
                response.close()
        return aws_response(request.url, response)

    def send(self, request: Any) -> httpx.Response:
        """botocore's signed ``request`` sent: httpx's answer, its body not read yet."""
        body = request.body
        if hasattr(body, "read"):
            body = body.read()
        return self.post(request.method, request.url, request.headers, body, _timeout.get())

    def post(
        self, method: str, url: str, headers: Mapping[str, Any], body: bytes | None, seconds: float | None
    ) -> httpx.Response:
        """A signed request sent, its headers as botocore gives them (text, or bytes encoded), ``seconds`` per
        connect/read/write (``None``: ``default_timeout``): httpx's answer, its body not read yet."""
        http = self.http
        sent = [(_ascii(name), _ascii(value)) for name, value in headers.items()]
        timeout = httpx.Timeout(seconds or self.default_timeout)
        outgoing = self._request(http, method, url, sent, body or b"", timeout)
        response: httpx.Response = http.send(outgoing, stream=True)
        return response

    def _request(
        self, http: httpx.Client, method: str, url: str, headers: list[tuple[bytes, bytes]], body: bytes, timeout: Any
    ) -> httpx.Request:
        """The request ``http.build_request`` builds from these, built with less where nothing else is added."""
        cookies = http.cookies
        if cookies or http.params:
            return http.build_request(method, url, headers=headers, content=body, timeout=timeout)
        if type(cookies) is httpx.Cookies:  # the same jar, read only when an answer sets cookies (see _Cookies)
            http._cookies = _Cookies(cookies.jar)  # the setter would copy the jar into a plain Cookies
        parsed = self._urls.get(url)
        if parsed is None:
            if len(self._urls) >= _URLS:
                self._urls.clear()
            parsed = self._urls[url] = httpx.URL(url)
        if parsed.is_relative_url:  # joined to the client's base URL (an absolute one is used as it is)
            return http.build_request(method, url, headers=headers, content=body, timeout=timeout)
        names = {name.lower() for name, _ in headers}  # Headers.update: a name given replaces the client's
        merged: list[tuple[bytes, bytes]] = [(k, v) for k, v in http.headers.raw if k.lower() not in names]
        merged += headers
        extensions = {"timeout": timeout.as_dict()}
        sent = {name.lower() for name, _ in merged}
        if type(body) is not bytes or b"content-length" not in sent or not sent.isdisjoint(_AUTO) or not parsed.host:
            return httpx.Request(method, parsed, headers=merged, content=body, extensions=extensions)
        # what Request(content=body) ends with when the headers give the length and no Host: the Host first, then the
        # headers as given (normalized once, not twice), the body read
        stream = httpx.ByteStream(body)
        request = httpx.Request(
            method, parsed, headers=[(b"Host", parsed.netloc), *merged], stream=stream, extensions=extensions
        )
        request.read()
        return request

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


def aws_response(url: str, response: httpx.Response) -> AWSResponse:
    """httpx's ``response`` as the ``AWSResponse`` botocore reads (its body read through ``raw.stream()``)."""
    headers: Any = dict(response.headers.items())  # AWSResponse wraps any mapping in its own HeadersDict
    return AWSResponse(url, response.status_code, headers, raw_body(response))


def raw_body(response: httpx.Response) -> Any:
    """The ``raw`` botocore reads ``response``'s body from (``stream()``, ``close()``)."""
    return _Body(response)


def _ascii(value: Any) -> bytes:
    """A header name or value as httpx encodes it (text as ASCII, raising for any other character), from botocore's
    bytes read as Latin-1 or text."""
    if type(value) is bytes and value.isascii():
        return value
    text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
    return text.encode("ascii")
