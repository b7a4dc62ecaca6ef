"""Sending a stream: each event as it arrives, keep-alive comments in silences, the upstream call cancelled
when the client goes away.

``stream_response`` waits for the stream's first event before it answers, so a
call that fails at once (a 429, an unknown model) still gets its own status and
error body. Past the first event (or past a keep-alive interval of silence, when
the headers go out with a comment), a failure ends the stream with the API's
error event. A producer task reads the upstream stream into a small queue: a
client reading slowly fills the queue and the producer waits, so nothing piles
up in memory; a client that disconnects cancels the producer, which closes the
upstream call.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from llmplex.gateway.calls import StreamEncoder
from llmplex.gateway.errors import GatewayError

__all__ = ["StreamOutcome", "stream_response"]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_KEEPALIVE = b": keep-alive\n\n"
_QUEUE_SIZE = 16
_END = object()


@dataclass
class StreamOutcome:
    """How a stream ended: ``error`` (the first failure, if any), ``disconnected`` when the client left."""

    error: GatewayError | None = None
    disconnected: bool = False
    status: int = 200


class _Failed:
    def __init__(self, error: GatewayError) -> None:
        self.error = error


async def _produce(chunks: AsyncIterator[bytes], queue: asyncio.Queue[object]) -> None:
    try:
        async for chunk in chunks:
            if chunk:
                await queue.put(chunk)
    except GatewayError as exc:
        await queue.put(_Failed(exc))
    finally:
        await queue.put(_END)


async def _disconnected(receive: Receive) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return


class _Reader:
    """Takes the producer's items off the queue; chunks already queued are joined (one send instead of many)."""

    def __init__(self, queue: asyncio.Queue[object], gone: asyncio.Future[None]) -> None:
        self.queue = queue
        self.gone = gone
        self.held: object | None = None  # an item taken while joining chunks, given next

    async def next(self, wait: float) -> object | None:
        """The next item, ``None`` after ``wait`` seconds of silence; ``ConnectionError`` once the client left."""
        if self.gone.done():
            raise ConnectionError("the client disconnected")
        if self.held is not None:
            item, self.held = self.held, None
            return item
        if not self.queue.empty():
            return self._join(self.queue.get_nowait())
        getter = asyncio.ensure_future(self.queue.get())
        done, _ = await asyncio.wait((getter, self.gone), timeout=wait, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            return self._join(getter.result())
        getter.cancel()
        if self.gone in done:
            raise ConnectionError("the client disconnected")
        return None

    def _join(self, first: object) -> object:
        if not isinstance(first, bytes):
            return first
        parts = [first]
        while not self.queue.empty() and len(parts) < _QUEUE_SIZE:
            item = self.queue.get_nowait()
            if not isinstance(item, bytes):
                self.held = item
                break
            parts.append(item)
        return b"".join(parts) if len(parts) > 1 else first


async def stream_response(
    send: Send,
    receive: Receive,
    chunks: AsyncIterator[bytes],
    encoder: StreamEncoder,
    headers: list[tuple[bytes, bytes]],
    error_response: Callable[[GatewayError], Awaitable[None]],
    keepalive: float,
) -> StreamOutcome:
    """Send ``chunks`` (SSE bytes) as a ``text/event-stream``; returns how the stream ended."""
    outcome = StreamOutcome()
    queue: asyncio.Queue[object] = asyncio.Queue(_QUEUE_SIZE)
    producer = asyncio.ensure_future(_produce(chunks, queue))
    gone = asyncio.ensure_future(_disconnected(receive))
    started = False
    reader = _Reader(queue, gone)
    try:
        while True:
            item = await reader.next(keepalive)
            if item is _END:
                break
            if isinstance(item, _Failed):
                outcome.error = item.error
                if not started:
                    outcome.status = item.error.status
                    await error_response(item.error)
                    return outcome
                await send({"type": "http.response.body", "body": encoder.fail(item.error), "more_body": True})
                continue
            if not started:
                started = True
                await send({"type": "http.response.start", "status": 200, "headers": headers})
            body = item if isinstance(item, bytes) else _KEEPALIVE
            await send({"type": "http.response.body", "body": body, "more_body": True})
        if not started:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except (ConnectionError, OSError):
        outcome.disconnected = True
    finally:
        producer.cancel()
        gone.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await producer
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await gone
    return outcome
