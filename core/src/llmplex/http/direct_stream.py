"""Open a streamed answer straight on the aiohttp session under an SDK's aiohttp-backed httpx client.

The twin of ``DirectSender.post`` (``llmplex.http.direct``) for a stream: the same request (headers in httpx's
order, timeouts capped at the llmplex deadline, the transport's exception table), without httpx's ``Request``,
``send``, ``Response`` and its three stream wrappers::

    sender = direct_sender(sdk_client._client)
    if sender is not None:
        response = await open_stream(sender, url, headers, body, timeouts, build_request)
        async for chunk in response.aiter_bytes():
            ...
        await response.aclose()

A 2xx answer without cookies or a content encoding is a ``DirectStream``: its bytes as they arrive, each read
bounded by the deadline (``ReadTimeout`` when the body is still arriving at it, as ``honour_deadline`` bounds
httpx's reading), failures the library's exceptions. Anything else (an error status, a redirect, a cookie, a
compressed body) is the unread streaming ``Response`` httpx would have returned, built from the same aiohttp
response with the client's cookie jar, response hooks and redirect rules.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from llmplex.http.clients import _LATE
from llmplex.http.direct import DirectSender
from llmplex.reliability.deadline import Deadline

__all__ = ["DirectStream", "open_stream"]


class DirectStream:
    """A 2xx streamed answer read straight from aiohttp: ``aiter_bytes``, ``aclose``, ``is_closed`` and ``request``
    (the httpx ``Request`` it stands for, built on demand), as a caller reads httpx's streaming ``Response``."""

    __slots__ = ("_deadline", "_request", "_response", "_sender", "headers", "status_code")

    def __init__(
        self, sender: DirectSender, response: Any, deadline: Deadline | None, request: Callable[[], Any]
    ) -> None:
        self._sender = sender
        self._response = response
        self._deadline = deadline
        self._request = request
        self.status_code: int = response.status
        self.headers: Any = response.headers

    @property
    def request(self) -> Any:
        """The httpx ``Request`` of this stream (for the SDK's errors)."""
        return self._request()

    def as_response(self) -> Any:
        """The httpx streaming ``Response`` this stands for, the rest of its body unread (what the SDKs' errors
        raised mid-stream carry)."""
        return self._sender.streaming_response(self._response, self._request())

    @property
    def is_closed(self) -> bool:
        """Whether the answer is closed (read to its end, or closed)."""
        return bool(self._response.closed)

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive, each read within the deadline (failures as the library reports them);
        the connection goes back to the pool once the body ended. Each read is awaited here, not in a coroutine of
        its own: one coroutine fewer a chunk."""
        read = self._response.content.readany
        deadline = self._deadline
        while True:
            scope = None
            try:
                if deadline is None:
                    chunk = await read()
                else:
                    scope = asyncio.timeout(deadline.remaining())
                    async with scope:
                        chunk = await read()
            except Exception as error:
                if scope is not None and scope.expired():
                    raise self._sender.library.ReadTimeout(_LATE, request=self._request()) from None
                self._sender.raise_mapped(error, self._request)
            if not chunk:
                break
            yield chunk
        self._response.release()

    async def aclose(self) -> None:
        """Close the answer: a body read to its end left its connection to the pool already; one cut short
        (a consumer that stopped, a failure, a cancellation) closes its connection."""
        response = self._response
        if not response.closed:
            response.close()


async def open_stream(
    sender: DirectSender,
    url: str,
    headers: Sequence[tuple[bytes, bytes]],
    body: bytes,
    timeout: Mapping[str, float | None],
    request: Callable[[], Any],
) -> DirectStream | Any:
    """``POST body`` to ``url`` on ``sender``'s session and return the answer unread (see the module); arguments
    as for ``DirectSender.post``."""
    response, deadline = await sender.open(url, headers, body, timeout, request)
    answer = response.headers
    if 200 <= response.status < 300 and "Content-Encoding" not in answer and "Set-Cookie" not in answer:
        return DirectStream(sender, response, deadline, request)
    return await sender.through_httpx(response, request, stream=True)
