"""Sending a stream: each event as it arrives, keep-alive comments in silences, the upstream call cancelled
when the client goes away.

``stream_response`` waits for the stream's first event before it answers, so a
call that fails at once (a 429, an unknown model) still gets its own status and
error body. Past the first event (or past a keep-alive interval of silence, when
the headers go out with a comment), a failure ends the stream with the API's
error event. The request's own task reads the stream's head (up to its first
chunk, or its failure) without a hop through another task; a producer task then
reads the rest into a small queue. The stream's first chunks go out before the
producer reads on, even when the upstream handed over many at once; later chunks
at hand together go out joined. A client reading slowly fills the queue and the
producer waits, so nothing piles up in memory; a client that disconnects cancels
the head's read or the producer, which closes the upstream call. The client's
leaving is told by its connection's future where the server gives one (``lost``:
``llmplex serve``'s protocol), else by a task waiting on ``receive`` for
``http.disconnect``. One timer a stream tells its silences.
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
"""Chunks of a stream's head sent as soon as they are at hand: its first (read by the request's own task; the
Chat Completions encoder gives the opening role chunk with the first text) and the next (the producer's first).
Later chunks at hand together go out joined (one send each time the sender runs): each send costs the gateway a
write, and a burst's chunks sent one by one cost a stream 16 % more CPU."""
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
    """A stream's chunks on their way to the client: its head read by the request's own task, the rest by the
    producer task into a queue of at most ``_QUEUE_SIZE`` items; one timer for the keep-alive comments.

    The head (the first chunk with bytes, the failure or the end) is read without a task hop: in a silence before
    it, the headers and a keep-alive comment go out from a short task, and the client's leaving cancels the read
    (which closes the upstream). Of the rest, the first ``_EAGER - 1`` items given to a sender that waits for one
    are sent before the producer reads on: ``put`` wakes the sender's own future (its task runs next) and yields
    to it, so the first chunk with text does not wait for the parsing and translation of the chunks the upstream
    sent with it. Later items wake the sender without yielding: what the producer has at hand by the time the
    sender runs goes out joined. The keep-alive timer is armed once a stream and re-armed when it fires (each
    wait numbered and its start read off the loop's clock), not once a wait: a timer costs about 2 us on uvloop.
    """

    def __init__(
        self, send: Send, headers: list[tuple[bytes, bytes]], keepalive: float, gone: asyncio.Future[None]
    ) -> None:
        self.items: collections.deque[object] = collections.deque()
        self.send = send
        self.headers = headers
        self.keepalive = keepalive
        self.gone = gone
        self.held: object | None = None  # an item taken while joining chunks, given next
        self.started = False  # the headers went out (with a keep-alive comment, before the head)
        self.left = False  # the client left while the head was awaited
        self.cancelled = False  # ... and the head's read was cancelled for it
        self._loop = asyncio.get_running_loop()
        self._since = 0.0  # when the current wait (for the head, or the sender's) began, on the loop's clock
        self._wait = 0  # the current (or last) wait's number
        self._timed = 0  # the number of the wait the timer was set for (0: none)
        self._reading: asyncio.Task[Any] | None = None  # the request's task, while it awaits the head
        self._keeper: asyncio.Task[None] | None = None  # sending a keep-alive before the head
        self._sender: asyncio.Future[None] | None = None  # the sender waiting for an item
        self._room: asyncio.Future[None] | None = None  # the producer waiting for room
        self._timer: asyncio.TimerHandle | None = None
        self._eager = _EAGER - 1  # the head's first chunk is read and sent by the request's task
        gone.add_done_callback(self._gone)

    def close(self) -> None:
        """Stop the timer and stop listening to ``gone`` (a connection's future outlives the stream)."""
        self.gone.remove_done_callback(self._gone)
        if self._timer is not None:
            self._timer.cancel()

    async def read_head(self, chunks: AsyncIterator[bytes]) -> object:
        """The first chunk with bytes, a ``_Failed`` or ``_END``; ``ConnectionError`` once the client left."""
        if self.gone.done():
            raise ConnectionError("the client disconnected")
        task = self._reading = asyncio.current_task()
        self._wait = self._timed = 1
        self._since = self._loop.time()
        self._timer = self._loop.call_later(self.keepalive, self._tick)
        item: object = _END
        failure: BaseException | None = None
        try:
            async for chunk in chunks:
                if chunk:
                    item = chunk
                    break
        except GatewayError as exc:
            item = _Failed(exc)
        except BaseException as exc:  # raised below, after the client's leaving is told apart
            failure = exc
        finally:
            self._reading = None
        if self.cancelled and task is not None and task.uncancel() > 0:
            failure = failure or asyncio.CancelledError()  # cancelled by another too: that cancellation goes on
        elif self.left or self.gone.done():
            failure = ConnectionError("the client disconnected")
        if failure is not None:
            if self._keeper is not None:
                self._keeper.cancel()  # the stream is over: no keep-alive after it
            raise failure
        if self._keeper is not None:
            await self._keeper  # a keep-alive on its way: the head goes out after it
        return item

    def _gone(self, _: object) -> None:
        if self._reading is not None:
            self._leave()
        else:
            self._wake()

    def _leave(self) -> None:
        self.left = True
        reading, self._reading = self._reading, None
        if reading is not None:
            self.cancelled = True
            reading.cancel()

    def _tick(self) -> None:
        """Keep-alive time: a wait as long as ``keepalive`` gets its comment (from a short task before the head,
        else by waking the sender with nothing); the timer is set for the next."""
        due = self._loop.time() + self.keepalive
        timed = 0
        keeping = self._keeper is not None and not self._keeper.done()
        if (self._reading is not None and not keeping) or self._sender is not None:
            if self._timed != self._wait:  # the wait began after the timer was set: its time is later
                due, timed = self._since + self.keepalive, self._wait
            elif self._reading is not None:
                self._keeper = asyncio.ensure_future(self._keep())
            else:
                self._wake()
        self._timed = timed
        self._timer = self._loop.call_at(due, self._tick)

    async def _keep(self) -> None:
        try:
            if not self.started:
                self.started = True
                await self.send({"type": "http.response.start", "status": 200, "headers": self.headers})
            await self.send({"type": "http.response.body", "body": _KEEPALIVE, "more_body": True})
        except (ConnectionError, OSError):
            self._leave()
        self._wait += 1  # the silence starts again after the comment
        self._since = self._loop.time()

    def _wake(self) -> None:
        waiter, self._sender = self._sender, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def put(self, item: object) -> None:
        """Queue ``item`` (waiting while the queue is full) and wake a waiting sender (which sends one of the
        first ``_EAGER - 1`` items before this returns)."""
        while len(self.items) >= _QUEUE_SIZE:
            self._room = self._loop.create_future()
            await self._room
        self.items.append(item)
        if self._sender is not None:
            self._wake()
            if self._eager > 0:
                self._eager -= 1
                await asyncio.sleep(0)  # the sender's task was woken first: it runs now

    async def next(self) -> object | None:
        """The next item, ``None`` after ``keepalive`` seconds of silence; ``ConnectionError`` once the client
        left."""
        if self.gone.done():
            raise ConnectionError("the client disconnected")
        if self.held is not None:
            item, self.held = self.held, None
            return item
        if not self.items:
            waiter = self._sender = self._loop.create_future()
            self._wait += 1
            self._since = self._loop.time()
            try:
                await waiter
            finally:
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
    reader = _Channel(send, headers, keepalive, gone)
    producer: asyncio.Future[None] | None = None
    try:
        item = await reader.read_head(chunks)
        started = reader.started
        if isinstance(item, bytes):
            producer = asyncio.ensure_future(_produce(chunks, reader))
        while item is not _END:
            if isinstance(item, _Failed):  # the last item: the producer's _END follows it
                outcome.error = item.error
                if not started:
                    outcome.status = item.error.status
                    await error_response(item.error)
                    return outcome
                await send({"type": "http.response.body", "body": encoder.fail(item.error), "more_body": True})
                break
            if not started:
                started = True
                await send({"type": "http.response.start", "status": 200, "headers": headers})
            body = item if isinstance(item, bytes) else _KEEPALIVE
            await send({"type": "http.response.body", "body": body, "more_body": True})
            item = await reader.next()
        if not started:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except (ConnectionError, OSError):
        outcome.disconnected = True
    finally:
        if producer is not None:
            producer.cancel()
        reader.close()
        if lost is None:
            gone.cancel()
        if producer is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await producer
        if lost is None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await gone
    return outcome
