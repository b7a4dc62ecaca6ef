"""Issue 34 item 5: a stream's first chunk leaves the gateway before the gateway reads the upstream's next one.

The upstream often hands over several events at once (in one TCP read, or a test stub's whole answer). The
producer task used to read them all into the queue (up to 16) before the sender ran, so the first chunk went out
with the 16th, after their parsing and translation. Now the stream's first ``_EAGER`` chunks are each sent
before the producer reads on; the rest of a burst goes out joined, and chunks still queue up (at most
``_QUEUE_SIZE``) while the client reads slowly. Event-ordered: each test logs what the upstream was asked for
and what was sent, no timing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from llmplex.gateway.errors import GatewayError
from llmplex.gateway.streaming import _EAGER, _QUEUE_SIZE, stream_response

HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8")]


class _Encoder:
    def encode(self, event: Any) -> bytes:
        raise AssertionError("not used: the chunks are SSE bytes already")

    def fail(self, error: GatewayError) -> bytes:
        return b"event: error\ndata: " + error.message.encode() + b"\n\n"


def _chunk(number: int) -> bytes:
    return b"data: %d\n\n" % number


class _Wire:
    """The log of one stream: ``pull N`` when the upstream is asked for chunk N, ``sent ...`` for each send."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.bodies: list[bytes] = []
        self.receive_forever = asyncio.Event()

    async def upstream(self, count: int) -> AsyncIterator[bytes]:
        """``count`` chunks all at hand at once (no await between them), as a burst in one read gives them."""
        for number in range(count):
            self.log.append(f"pull {number}")
            yield _chunk(number)

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.log.append("sent start")
            return
        self.bodies.append(message.get("body", b""))
        self.log.append(f"sent {message.get('body', b'')!r}")

    async def receive(self) -> dict[str, Any]:
        await self.receive_forever.wait()  # the client never leaves
        return {"type": "http.disconnect"}

    async def error_response(self, error: GatewayError) -> None:
        raise AssertionError(f"no failure expected: {error}")


async def _stream(wire: _Wire, chunks: AsyncIterator[bytes]) -> Any:
    answer = stream_response(wire.send, wire.receive, chunks, _Encoder(), HEADERS, wire.error_response, 60.0)
    return await asyncio.wait_for(answer, 60)  # a bound, not a margin: a wrong order hangs, and fails here


def test_item_5_the_first_chunk_is_sent_before_the_upstream_is_asked_for_the_second() -> None:
    wire = _Wire()
    outcome = asyncio.run(_stream(wire, wire.upstream(20)))
    assert outcome.error is None and not outcome.disconnected
    first_body = wire.log.index(f"sent {_chunk(0)!r}")
    assert wire.log[:first_body] == ["pull 0", "sent start"]
    assert first_body < wire.log.index("pull 1")
    assert b"".join(wire.bodies) == b"".join(_chunk(n) for n in range(20))  # every chunk, in order, once
    assert wire.bodies[-1] == b""  # then the end of the body


def test_item_5_the_head_of_a_burst_goes_out_chunk_by_chunk_and_the_rest_joined() -> None:
    """The first ``_EAGER`` chunks (OpenAI's role chunk, then the first with text) each go out before the next is
    read; the rest of a burst goes out in fewer sends than chunks."""
    wire = _Wire()
    asyncio.run(_stream(wire, wire.upstream(20)))
    expected = ["pull 0", "sent start"]
    for number in range(_EAGER):
        if number:
            expected.append(f"pull {number}")
        expected.append(f"sent {_chunk(number)!r}")
    assert wire.log[: len(expected)] == expected
    rest = wire.bodies[_EAGER:-1]
    assert b"".join(rest) == b"".join(_chunk(n) for n in range(_EAGER, 20))
    assert len(rest) < 20 - _EAGER


def test_item_5_a_trickling_upstream_gets_each_chunk_sent_as_it_comes() -> None:
    """Past the head too: a chunk that arrives while the sender waits is sent before the next one arrives."""

    async def scenario() -> _Wire:
        wire = _Wire()
        arrived = asyncio.Event()

        async def send(message: dict[str, Any]) -> None:
            await _Wire.send(wire, message)
            if message["type"] == "http.response.body":
                arrived.set()

        wire.send = send  # type: ignore[method-assign]

        async def upstream() -> AsyncIterator[bytes]:
            for number in range(6):
                arrived.clear()
                wire.log.append(f"pull {number}")
                yield _chunk(number)
                await arrived.wait()  # the next chunk comes only once this one was sent

        await _stream(wire, upstream())
        return wire

    wire = asyncio.run(scenario())
    assert wire.bodies[:-1] == [_chunk(n) for n in range(6)]


def test_item_5_chunks_still_queue_and_go_out_joined_while_the_client_reads_slowly() -> None:
    """A send that blocks (the client's socket is full) lets the producer read ahead, at most the queue's size;
    what waited goes out in one send once the client reads again."""

    async def scenario() -> tuple[_Wire, list[int]]:
        wire = _Wire()
        unblock = asyncio.Event()
        blocked_at: list[int] = []
        original = wire.send

        async def slow_send(message: dict[str, Any]) -> None:
            await original(message)
            if message["type"] == "http.response.body" and len(wire.bodies) == 1:
                blocked_at.append(len([entry for entry in wire.log if entry.startswith("pull")]))
                await unblock.wait()

        wire.send = slow_send  # type: ignore[method-assign]

        async def upstream() -> AsyncIterator[bytes]:
            for number in range(40):
                wire.log.append(f"pull {number}")
                yield _chunk(number)
                if number == _QUEUE_SIZE:
                    unblock.set()  # the producer read this far while the client was not reading: let it read

        await _stream(wire, upstream())
        return wire, blocked_at

    wire, blocked_at = asyncio.run(scenario())
    assert blocked_at == [1]  # the first chunk went out alone
    assert wire.bodies[0] == _chunk(0)
    assert b"".join(wire.bodies) == b"".join(_chunk(n) for n in range(40))
    joined = [body for body in wire.bodies if body.count(b"data:") > 1]
    assert joined and max(body.count(b"data:") for body in joined) <= _QUEUE_SIZE


def test_item_5_a_failure_after_the_first_chunk_still_ends_the_stream_with_the_error_event() -> None:
    wire = _Wire()

    async def upstream() -> AsyncIterator[bytes]:
        wire.log.append("pull 0")
        yield _chunk(0)
        wire.log.append("pull 1")
        raise GatewayError(502, "upstream broke")

    outcome = asyncio.run(_stream(wire, upstream()))
    assert outcome.error is not None and outcome.error.status == 502
    assert wire.log.index(f"sent {_chunk(0)!r}") < wire.log.index("pull 1")
    assert wire.bodies[-2] == b"event: error\ndata: upstream broke\n\n" and wire.bodies[-1] == b""


def test_item_5_a_silent_upstream_still_gets_keepalives_and_a_client_that_leaves_ends_it() -> None:
    async def scenario() -> tuple[list[bytes], Any, bool]:
        bodies: list[bytes] = []
        leave = asyncio.Event()
        closed = asyncio.Event()

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                bodies.append(message.get("body", b""))
                if len(bodies) == 2:
                    leave.set()

        async def receive() -> dict[str, Any]:
            await leave.wait()
            return {"type": "http.disconnect"}

        async def upstream() -> AsyncIterator[bytes]:
            try:
                yield _chunk(0)
                await asyncio.Event().wait()  # silence, for ever
                yield _chunk(1)
            finally:
                closed.set()

        async def error_response(error: GatewayError) -> None:
            raise AssertionError(error)

        answer = stream_response(send, receive, upstream(), _Encoder(), HEADERS, error_response, 0.001)
        outcome = await asyncio.wait_for(answer, 60)
        return bodies, outcome, closed.is_set()

    bodies, outcome, closed = asyncio.run(scenario())
    assert bodies[0] == _chunk(0) and bodies[1] == b": keep-alive\n\n"
    assert outcome.disconnected and closed  # the upstream call was closed when the client left
