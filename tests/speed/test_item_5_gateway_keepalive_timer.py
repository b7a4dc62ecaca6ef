"""Issue 34 item 5: a stream's keep-alive comments come from one timer a stream, not one a wait.

The sender set a timer (``loop.call_later``) each time it waited for the producer, and cancelled it when an item
came: about 2 us a wait on uvloop, several a stream, one on the way to the first chunk with text. The timer is now
set once, when the head is awaited, and set again when it fires: a wait as long as the keep-alive interval gets
its comment, a shorter one gets the timer moved to the interval's end from its start. The loop's timers are
caught here and fired by hand on a clock the test moves: no waiting on the wall clock.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from llmplex.gateway.errors import GatewayError
from llmplex.gateway.streaming import stream_response

HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8")]
KEEPALIVE = b": keep-alive\n\n"
INTERVAL = 10.0


class _Encoder:
    def fail(self, error: GatewayError) -> bytes:
        return b"event: error\ndata: " + error.message.encode() + b"\n\n"


def _chunk(number: int) -> bytes:
    return b"data: %d\n\n" % number


class _Timers:
    """The loop's timers set from here on, caught (not run): ``fire`` runs the due ones at the test's clock."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.now = 1000.0
        self.armed: list[tuple[float, Callable[[], None], _Handle]] = []
        self.count = 0
        loop.time = lambda: self.now  # type: ignore[method-assign]
        loop.call_later = lambda delay, callback, *args, **_: self._arm(self.now + delay, callback, *args)  # type: ignore[method-assign]
        loop.call_at = lambda when, callback, *args, **_: self._arm(when, callback, *args)  # type: ignore[method-assign]

    def _arm(self, when: float, callback: Callable[..., None], *args: Any) -> _Handle:
        self.count += 1
        handle = _Handle()
        self.armed.append((when, lambda: callback(*args), handle))
        return handle

    def pending(self) -> list[float]:
        return [when for when, _, handle in self.armed if not handle.cancelled]

    def fire(self, now: float) -> None:
        """Move the clock to ``now`` and run the timers due by then, those they set for by then too."""
        self.now = now
        while due := [entry for entry in self.armed if not entry[2].cancelled and entry[0] <= now]:
            self.armed = [entry for entry in self.armed if entry not in due]
            for _, run, _ in due:
                run()


class _Handle:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class _Stream:
    """A client that logs what it was sent and an upstream that gives a chunk each time ``give`` is called."""

    def __init__(self) -> None:
        self.log: list[object] = []
        self.sent = asyncio.Event()
        self.given = asyncio.Queue[int]()

    async def send(self, message: dict[str, Any]) -> None:
        self.log.append("start" if message["type"] == "http.response.start" else message.get("body", b""))
        self.sent.set()

    async def receive(self) -> dict[str, Any]:
        await asyncio.Event().wait()  # the client stays
        return {"type": "http.disconnect"}

    async def error_response(self, error: GatewayError) -> None:
        raise AssertionError(error)

    async def upstream(self) -> AsyncIterator[bytes]:
        while (number := await self.given.get()) >= 0:
            yield _chunk(number)

    async def give(self, number: int) -> None:
        """Hand the upstream chunk ``number`` (``-1``: the end) and wait until the stream sent what came of it."""
        self.sent.clear()
        self.given.put_nowait(number)
        await self.sent.wait()

    def respond(self, lost: asyncio.Future[None]) -> Any:
        return stream_response(
            self.send, self.receive, self.upstream(), _Encoder(), HEADERS, self.error_response, INTERVAL, lost
        )


def _run(scenario: Callable[[], Any]) -> None:
    """Run ``scenario`` on a loop of its own thread, bounded (the loop's clock is the test's: ``asyncio.timeout``
    would never fire): a bound, not a margin, so a stream that hangs fails here."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(scenario())
        except BaseException as exc:  # raised in the test's thread below
            failures.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the stream hung"
    if failures:
        raise failures[0]


def test_item_5_a_stream_sets_one_keepalive_timer_not_one_a_wait() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        stream, timers = _Stream(), _Timers(loop)
        lost = loop.create_future()
        task = asyncio.ensure_future(stream.respond(lost))
        for number in range(8):  # each chunk comes while the sender waits for it
            await stream.give(number)
        await stream.give(-1)
        outcome = await task
        assert not outcome.disconnected and stream.log == ["start", *map(_chunk, range(8)), b""]
        assert timers.count == 1  # the head's wait and the sender's eight: one timer
        assert timers.pending() == []  # cancelled with the stream

    _run(scenario)


def test_item_5_the_one_timer_measures_each_wait_from_its_start() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        stream, timers = _Stream(), _Timers(loop)
        start = timers.now
        task = asyncio.ensure_future(stream.respond(loop.create_future()))
        await stream.give(0)  # the head, at once
        timers.now = start + INTERVAL / 2
        await stream.give(1)  # the sender waits from here
        timers.fire(start + INTERVAL)  # the timer set for the head's wait: the sender's is half as old
        assert KEEPALIVE not in stream.log and timers.pending() == [start + INTERVAL * 1.5]
        stream.sent.clear()
        timers.fire(start + INTERVAL * 1.5)  # a whole interval of silence: the comment
        await stream.sent.wait()
        assert stream.log[-1] == KEEPALIVE and timers.pending() == [start + INTERVAL * 2.5]
        await stream.give(2)
        await stream.give(-1)
        await task
        assert stream.log == ["start", _chunk(0), _chunk(1), KEEPALIVE, _chunk(2), b""]

    _run(scenario)


def test_item_5_the_one_timer_keeps_a_silent_heads_headers_and_comments_an_interval_apart() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        stream, timers = _Stream(), _Timers(loop)
        start = timers.now
        task = asyncio.ensure_future(stream.respond(loop.create_future()))
        await asyncio.sleep(0)
        for beat in range(1, 4):
            stream.sent.clear()
            timers.fire(start + INTERVAL * beat)
            await stream.sent.wait()
            await asyncio.sleep(0)  # the keep-alive's task ends
        assert stream.log == ["start", KEEPALIVE, KEEPALIVE, KEEPALIVE]
        assert timers.pending() == [start + INTERVAL * 4]
        await stream.give(0)
        await stream.give(-1)
        await task
        assert stream.log == ["start", KEEPALIVE, KEEPALIVE, KEEPALIVE, _chunk(0), b""]

    _run(scenario)


def test_item_5_a_wait_begun_as_the_timer_moves_for_an_earlier_one_gets_a_whole_interval() -> None:
    """The timer, moved at a tick for the wait then in progress, finds another wait begun at that same tick's
    time (one step of the loop): that wait gets its own whole interval, not the earlier wait's end."""

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        stream, timers = _Stream(), _Timers(loop)
        start = timers.now
        task = asyncio.ensure_future(stream.respond(loop.create_future()))
        await stream.give(0)
        timers.now = start + INTERVAL / 2
        await stream.give(1)  # a wait from start + INTERVAL / 2
        timers.fire(start + INTERVAL)  # moved to that wait's end
        assert timers.pending() == [start + INTERVAL * 1.5]
        await stream.give(2)  # at the tick's time: a wait from start + INTERVAL
        timers.fire(start + INTERVAL * 1.5)
        assert KEEPALIVE not in stream.log and timers.pending() == [start + INTERVAL * 2]
        stream.sent.clear()
        timers.fire(start + INTERVAL * 2)
        await stream.sent.wait()
        assert stream.log[-1] == KEEPALIVE
        await stream.give(-1)
        await task
        assert stream.log == ["start", _chunk(0), _chunk(1), _chunk(2), KEEPALIVE, b""]

    _run(scenario)
