"""Issue 34 item 5: a stream's head (its first chunk, failure or end) is read by the request's own task.

``stream_response`` started a producer task that read the whole upstream stream, the first chunk included, into a
queue the request's task waited on: the first chunk crossed a task hop (a task, a future, a wake-up, a yield).
Now the request's task reads the head itself and starts the producer for the rest. What must hold as before:
keep-alive comments (the headers first) in a silence before the head, a client leaving while the head is awaited
cancels and closes the upstream call, a failure as the first event gets its own status and error body (or the
error event once a keep-alive has gone out), a blocked send is never overtaken, and another's cancellation stays
one. Event-ordered: no timing (the keep-alive interval is tiny and the tests wait on events, never on a clock).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from llmplex.gateway.errors import GatewayError
from llmplex.gateway.streaming import StreamOutcome, stream_response

HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8")]
KEEPALIVE = b": keep-alive\n\n"


class _Encoder:
    def fail(self, error: GatewayError) -> bytes:
        return b"event: error\ndata: " + error.message.encode() + b"\n\n"


def _chunk(number: int) -> bytes:
    return b"data: %d\n\n" % number


class _Client:
    """The stream's client: what was sent (``start``, then each body), the error answer, whether it left."""

    def __init__(self) -> None:
        self.log: list[object] = []
        self.errors: list[GatewayError] = []
        self.leave = asyncio.Event()
        self.sent = asyncio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        self.log.append("start" if message["type"] == "http.response.start" else message.get("body", b""))
        self.sent.set()

    async def keepalives_sent(self, count: int) -> None:
        while self.keepalives() < count:
            self.sent.clear()
            await self.sent.wait()

    async def receive(self) -> dict[str, Any]:
        await self.leave.wait()
        return {"type": "http.disconnect"}

    async def error_response(self, error: GatewayError) -> None:
        self.errors.append(error)

    def keepalives(self) -> int:
        return self.log.count(KEEPALIVE)


class _Upstream:
    """An upstream stream that waits on ``release`` before its first chunk; notes its task and its closing."""

    def __init__(self, chunks: int = 3, fail: GatewayError | None = None) -> None:
        self.chunks, self.fail = chunks, fail
        self.release = asyncio.Event()
        self.waiting = asyncio.Event()
        self.tasks: list[asyncio.Task[Any] | None] = []
        self.given = asyncio.Event()
        self.cancelled = False
        self.closed = False

    async def stream(self) -> AsyncIterator[bytes]:
        self.tasks.append(asyncio.current_task())
        try:
            self.waiting.set()
            await self.release.wait()
            if self.fail is not None:
                raise self.fail
            for number in range(self.chunks):
                self.given.set()
                yield _chunk(number)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        finally:
            self.closed = True


def _respond(
    client: _Client, upstream: _Upstream, keepalive: float = 3600.0, lost: asyncio.Future[None] | None = None
) -> Any:
    return stream_response(
        client.send, client.receive, upstream.stream(), _Encoder(), HEADERS, client.error_response, keepalive, lost
    )


def _run(scenario: Any) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(60):  # a bound, not a margin: a wrong order hangs, and fails here
            await scenario()

    asyncio.run(bounded())


def test_item_5_the_streams_head_is_read_in_the_requests_own_task() -> None:
    async def scenario() -> None:
        client, upstream = _Client(), _Upstream()
        upstream.release.set()
        task = asyncio.ensure_future(_respond(client, upstream))
        outcome = await task
        assert upstream.tasks == [task]  # the upstream's first chunk was read without a producer task
        assert (outcome.error, outcome.disconnected, outcome.status) == (None, False, 200)
        assert client.log == ["start", _chunk(0), _chunk(1), _chunk(2), b""]

    _run(scenario)


@pytest.mark.parametrize("told_by", ["connection", "receive"])
def test_item_5_a_client_leaving_while_the_head_is_awaited_closes_the_upstream(told_by: str) -> None:
    async def scenario() -> None:
        client, upstream = _Client(), _Upstream()
        lost = asyncio.get_running_loop().create_future() if told_by == "connection" else None
        task = asyncio.ensure_future(_respond(client, upstream, lost=lost))
        await upstream.waiting.wait()
        if lost is not None:
            lost.set_result(None)
        else:
            client.leave.set()
        outcome = await task
        assert outcome == StreamOutcome(disconnected=True)
        assert upstream.cancelled and upstream.closed  # the upstream call was cancelled and closed
        assert client.log == [] and client.errors == []  # nothing sent to a client that left
        assert task.cancelling() == 0  # the request's task is not left cancelled
        assert asyncio.all_tasks() == {asyncio.current_task()}  # no task left behind
        if lost is not None:
            assert not lost._callbacks  # type: ignore[attr-defined]  # nothing left on the connection's future

    _run(scenario)


def test_item_5_a_client_gone_before_the_stream_starts_never_opens_the_upstream() -> None:
    async def scenario() -> None:
        client, upstream = _Client(), _Upstream()
        lost = asyncio.get_running_loop().create_future()
        lost.set_result(None)
        outcome = await _respond(client, upstream, lost=lost)
        assert outcome.disconnected and upstream.tasks == [] and client.log == []

    _run(scenario)


def test_item_5_silence_before_the_head_gets_the_headers_and_keepalives_then_the_chunks() -> None:
    async def scenario() -> None:
        client, upstream = _Client(), _Upstream()
        task = asyncio.ensure_future(_respond(client, upstream, keepalive=0.001))
        await client.keepalives_sent(3)
        upstream.release.set()
        outcome = await task
        assert outcome == StreamOutcome()
        keepalives = client.keepalives()
        assert client.log == ["start", *[KEEPALIVE] * keepalives, _chunk(0), _chunk(1), _chunk(2), b""]
        assert upstream.tasks == [task] and not upstream.cancelled
        assert asyncio.all_tasks() == {asyncio.current_task()}  # no keep-alive task left behind

    _run(scenario)


def test_item_5_a_failure_as_the_first_event_gets_its_own_status_and_error_body() -> None:
    async def scenario() -> None:
        client, upstream = _Client(), _Upstream(fail=GatewayError(429, "slow down", kind="rate_limited"))
        upstream.release.set()
        outcome = await _respond(client, upstream)
        assert outcome.status == 429 and outcome.error is not None and outcome.error.status == 429
        assert client.errors == [outcome.error] and client.log == []  # the error answer alone: no stream head

    _run(scenario)


def test_item_5_a_failure_as_the_first_event_after_keepalives_ends_the_stream_with_the_error_event() -> None:
    async def scenario() -> None:
        client, upstream = _Client(), _Upstream(fail=GatewayError(502, "upstream broke"))
        task = asyncio.ensure_future(_respond(client, upstream, keepalive=0.001))
        await client.keepalives_sent(1)
        upstream.release.set()
        outcome = await task
        assert outcome.status == 200 and outcome.error is not None and outcome.error.status == 502
        assert client.errors == []  # the headers were out: the failure is the stream's error event
        assert client.log[0] == "start" and client.log[-2:] == [b"event: error\ndata: upstream broke\n\n", b""]

    _run(scenario)


def test_item_5_a_head_that_arrives_during_a_blocked_keepalive_waits_for_it() -> None:
    """A slow client: the keep-alive's send blocks; the head arriving meanwhile goes out after it, not beside it."""

    async def scenario() -> None:
        client, upstream = _Client(), _Upstream()
        unblock = asyncio.Event()
        sending: list[bool] = []

        async def slow_send(message: dict[str, Any]) -> None:
            assert not sending, "two sends at once"
            sending.append(True)
            await _Client.send(client, message)
            if message.get("body") == KEEPALIVE:
                await unblock.wait()
            sending.pop()

        client.send = slow_send  # type: ignore[method-assign]
        task = asyncio.ensure_future(_respond(client, upstream, keepalive=0.001))
        await client.keepalives_sent(1)
        upstream.release.set()
        await upstream.given.wait()  # the head is read
        for _ in range(20):
            await asyncio.sleep(0)  # the request's task runs on as far as it can
        assert client.log == ["start", KEEPALIVE]  # the chunk waits for the blocked keep-alive
        unblock.set()
        outcome = await task
        assert outcome == StreamOutcome() and client.log[:2] == ["start", KEEPALIVE] and client.log[-1] == b""
        assert b"".join(body for body in client.log[2:] if isinstance(body, bytes)) == b"".join(map(_chunk, range(3)))

    _run(scenario)


def test_item_5_a_keepalive_to_a_client_that_left_closes_the_upstream() -> None:
    async def scenario() -> None:
        client, upstream = _Client(), _Upstream()

        async def broken_send(message: dict[str, Any]) -> None:
            raise ConnectionResetError("the client's connection was reset")

        client.send = broken_send  # type: ignore[method-assign]
        outcome = await _respond(client, upstream, keepalive=0.001)
        assert outcome.disconnected and upstream.cancelled and upstream.closed

    _run(scenario)


def test_item_5_anothers_cancellation_while_the_head_is_awaited_stays_one() -> None:
    async def scenario() -> None:
        client, upstream = _Client(), _Upstream()
        lost = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(_respond(client, upstream, lost=lost))
        await upstream.waiting.wait()
        task.cancel()  # the server's cancellation, not the client's leaving
        with pytest.raises(asyncio.CancelledError):
            await task
        assert upstream.cancelled and upstream.closed and client.log == []
        assert not lost._callbacks  # type: ignore[attr-defined]

    _run(scenario)


def test_item_5_the_client_leaving_and_anothers_cancellation_together_stay_a_cancellation() -> None:
    async def scenario() -> None:
        client, upstream = _Client(), _Upstream()
        lost = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(_respond(client, upstream, lost=lost))
        await upstream.waiting.wait()
        lost.set_result(None)  # the client's leaving is told first (its callback cancels the task)...
        task.cancel()  # ...and the server cancels it too
        with pytest.raises(asyncio.CancelledError):
            await task
        assert upstream.cancelled and upstream.closed

    _run(scenario)


def test_item_5_anothers_cancellation_is_not_held_up_by_a_blocked_keepalive() -> None:
    async def scenario() -> None:
        client, upstream = _Client(), _Upstream()
        blocked = asyncio.Event()

        async def stuck_send(message: dict[str, Any]) -> None:
            await _Client.send(client, message)
            if message.get("body") == KEEPALIVE:
                blocked.set()
                await asyncio.Event().wait()  # the client never reads again

        client.send = stuck_send  # type: ignore[method-assign]
        lost = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(_respond(client, upstream, keepalive=0.001, lost=lost))
        await blocked.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert upstream.cancelled and upstream.closed
        await asyncio.sleep(0)  # the keep-alive's task, cancelled with the stream, ends at its next step
        assert asyncio.all_tasks() == {asyncio.current_task()}

    _run(scenario)
