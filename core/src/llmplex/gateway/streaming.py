"""Sending a stream: each event as it arrives, keep-alive comments in silences, the upstream call cancelled
when the client goes away.

``stream_response`` waits for the stream's first event before it answers, so a
call that fails at once (a 429, an unknown model) still gets its own status and
error body. Past the first event (or past a keep-alive interval of silence, when
the headers go out with a comment), a failure ends the stream with the API's
error event. A producer task reads the upstream stream into a small queue; the
stream's first chunks go out before the producer reads on, even when the
upstream handed over many at once; later chunks at hand together go out joined.
A client reading slowly fills the queue and the producer waits, so nothing piles
up in memory; a client that disconnects cancels the producer, which closes the
upstream call. The client's leaving is told by its connection's future where the
server gives one (``lost``: ``llmplex serve``'s protocol), else by a task waiting
on ``receive`` for ``http.disconnect``.
"""

from __future__ import annotations

import asyncio
import collections
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
_EAGER = 2
"""Chunks of a stream's head sent as soon as they are at hand: OpenAI's opening chunk (the role, no text) and
the first with text. Later chunks at hand together go out joined (one send each time the sender runs): each
send costs the gateway a write, and a burst's chunks sent one by one cost a stream 16 % more CPU."""
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


class _Channel:
    """The producer's items on their way to the sender, at most ``_QUEUE_SIZE`` waiting.

    The first ``_EAGER`` items given to a sender that waits for one are sent before the producer reads on:
    ``put`` wakes the sender's own future (its task runs next) and yields to it, so a stream's first chunk does
    not wait for the parsing and translation of the chunks the upstream sent with it. Later items wake the
    sender without yielding: what the producer has at hand by the time the sender runs goes out joined.
    """

    def __init__(self, gone: asyncio.Future[None]) -> None:
        self.items: collections.deque[object] = collections.deque()
        self.gone = gone
        self.held: object | None = None  # an item taken while joining chunks, given next
        self._sender: asyncio.Future[None] | None = None  # the sender waiting for an item
        self._room: asyncio.Future[None] | None = None  # the producer waiting for room
        self._eager = _EAGER
        gone.add_done_callback(self._wake)

    def close(self) -> None:
        """Stop listening to ``gone`` (a connection's future outlives the stream)."""
        self.gone.remove_done_callback(self._wake)

    def _wake(self, _: object = None) -> None:
        waiter, self._sender = self._sender, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def put(self, item: object) -> None:
        """Queue ``item`` (waiting while the queue is full) and wake a waiting sender (which sends one of the
        first ``_EAGER`` items before this returns)."""
        while len(self.items) >= _QUEUE_SIZE:
            self._room = asyncio.get_running_loop().create_future()
            await self._room
        self.items.append(item)
        if self._sender is not None:
            self._wake()
            if self._eager > 0:
                self._eager -= 1
                await asyncio.sleep(0)  # the sender's task was woken first: it runs now

    async def next(self, wait: float) -> object | None:
        """The next item, ``None`` after ``wait`` seconds of silence; ``ConnectionError`` once the client left."""
        if self.gone.done():
            raise ConnectionError("the client disconnected")
        if self.held is not None:
            item, self.held = self.held, None
            return item
        if not self.items:
            loop = asyncio.get_running_loop()
            waiter = self._sender = loop.create_future()
            timer = loop.call_later(wait, self._wake)
            try:
                await waiter
            finally:
                timer.cancel()
                self._sender = None
            if self.gone.done():
                raise ConnectionError("the client disconnected")
            if not self.items:
                return None
        return self._join()

    def _join(self) -> object:
        """The first queued item; chunks queued behind a chunk are joined to it (one send instead of many)."""
        first = self.items.popleft()
        if isinstance(first, bytes) and self.items:
            parts = [first]
            while self.items and len(parts) < _QUEUE_SIZE:
                item = self.items.popleft()
                if not isinstance(item, bytes):
                    self.held = item
                    break
                parts.append(item)
            first = b"".join(parts) if len(parts) > 1 else first
        room, self._room = self._room, None
        if room is not None and not room.done():
            room.set_result(None)
        return first


async def _produce(chunks: AsyncIterator[bytes], channel: _Channel) -> None:
    try:
        async for chunk in chunks:
            if chunk:
                await channel.put(chunk)
    except GatewayError as exc:
        await channel.put(_Failed(exc))
    finally:
        await channel.put(_END)


async def _disconnected(receive: Receive) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return


async def stream_response(
    send: Send,
    receive: Receive,
    chunks: AsyncIterator[bytes],
    encoder: StreamEncoder,
    headers: list[tuple[bytes, bytes]],
    error_response: Callable[[GatewayError], Awaitable[None]],
    keepalive: float,
    lost: asyncio.Future[None] | None = None,
) -> StreamOutcome:
    """Send ``chunks`` (SSE bytes) as a ``text/event-stream``; returns how the stream ended. ``lost``: a future
    done once the client's connection is lost (else a task waits on ``receive`` for the disconnect)."""
    outcome = StreamOutcome()
    gone = asyncio.ensure_future(_disconnected(receive)) if lost is None else lost
    reader = _Channel(gone)
    producer = asyncio.ensure_future(_produce(chunks, reader))
    started = False
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
        reader.close()
        if lost is None:
            gone.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await producer
        if lost is None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await gone
    return outcome
