"""Deadlines through the public API: checked before each attempt, passed down as the SDK timeout,
and never overrun — not by a hang, not by a stream that stalls — in sync, async and streaming calls."""

from __future__ import annotations

import asyncio
import threading
import time as real_time
from collections.abc import AsyncIterator, Awaitable, Generator, Iterator
from typing import Any

import pytest

import llmplex
from llmplex import Deadline, LLMDeadlineExceededError, LLMRateLimitError, LLMServerError, hookimpl
from llmplex.reliability.clock import Clock
from tests.reliability.fakes import FakeTime
from tests.support.late import Late

OVERRUN = 0.05  # the most real time a call may run past its deadline


class TimeoutSpy:
    """A pipeline wrapper recording the ``timeout`` each attempt hands the provider."""

    def __init__(self) -> None:
        self.timeouts: list[float | None] = []

    @hookimpl(wrapper=True)
    def llmplex_call(self, timeout: float | None) -> Generator[None, Any, Any]:
        self.timeouts.append(timeout)
        return (yield)


class Staller:
    """A pipeline wrapper whose streams deliver ``after`` raw events, then go silent for ``seconds`` (a sync stream:
    until ``release`` is set, if sooner)."""

    def __init__(self, after: int = 1, seconds: float = 3.0) -> None:
        self.after, self.seconds = after, seconds
        self.release = threading.Event()

    @hookimpl(wrapper=True)
    def llmplex_stream(self) -> Generator[None, Any, Iterator[Any]]:
        events = yield

        def stalling() -> Iterator[Any]:
            for index, event in enumerate(events):
                if index == self.after:
                    self.release.wait(self.seconds)
                yield event

        return stalling()

    @hookimpl(wrapper=True)
    def llmplex_astream(self) -> Generator[None, Any, Awaitable[AsyncIterator[Any]]]:
        opening = yield

        async def stalling(events: AsyncIterator[Any]) -> AsyncIterator[Any]:
            index = 0
            async for event in events:
                if index == self.after:
                    await asyncio.sleep(self.seconds)
                index += 1
                yield event

        async def opened() -> AsyncIterator[Any]:
            return stalling(await opening)

        return opened()


def _consume(iterator: Iterator[llmplex.StreamEvent]) -> list[llmplex.StreamEvent]:
    return list(iterator)


async def _aconsume(iterator: AsyncIterator[llmplex.StreamEvent]) -> list[llmplex.StreamEvent]:
    return [event async for event in iterator]


# -- before anything is sent ---------------------------------------------------------------


def test_an_expired_deadline_fails_before_anything_is_sent(client: llmplex.Client, mock_backend: Any) -> None:
    expired = Deadline.after(0)
    with pytest.raises(LLMDeadlineExceededError, match="before the request could be sent") as info:
        client.complete("mock:m", "x", deadline=expired)
    assert info.value.attempts == 0 and mock_backend.calls == []
    with pytest.raises(LLMDeadlineExceededError):
        _consume(client.stream("mock:m", "x", deadline=expired))
    with pytest.raises(LLMDeadlineExceededError):
        asyncio.run(client.acomplete("mock:m", "x", deadline=expired))
    with pytest.raises(LLMDeadlineExceededError):
        asyncio.run(_aconsume(client.astream("mock:m", "x", deadline=expired)))
    assert mock_backend.calls == []


def test_the_remaining_time_is_the_sdk_timeout_of_each_attempt() -> None:
    time = FakeTime(draw=0.5)
    spy = TimeoutSpy()
    client = llmplex.Client(clock=time.clock(), plugins=[spy])
    backend = client.provider_client("mock")
    backend.push_error(LLMServerError("503"))
    backend.push_error(LLMServerError("503"))
    client.complete("mock:m", "x", timeout=10)
    assert spy.timeouts == [10.0, 9.75, 9.25]
    client.complete("mock:m", "x")
    assert spy.timeouts[-1] is None  # no deadline, no timeout


def test_config_timeout_is_the_default_deadline() -> None:
    spy = TimeoutSpy()
    client = llmplex.Client(clock=FakeTime().clock(), plugins=[spy], timeout=4)
    client.complete("mock:m", "x")
    assert spy.timeouts == [4.0]


def test_a_retry_wait_that_would_pass_the_deadline_is_not_started() -> None:
    time = FakeTime()
    client = llmplex.Client(clock=time.clock())
    client.provider_client("mock").push_error(LLMRateLimitError("429", retry_after=2))
    with pytest.raises(LLMRateLimitError) as info:
        client.complete("mock:m", "x", timeout=1)
    assert time.sleeps == [] and info.value.attempts == 1 and info.value.retryable
    assert "would pass the deadline" in info.value.context["gave_up"]


def test_backoff_stops_when_the_next_wait_no_longer_fits() -> None:
    time = FakeTime(draw=0.5)
    client = llmplex.Client(clock=time.clock())
    backend = client.provider_client("mock")
    for _ in range(5):
        backend.push_error(LLMServerError("503"))
    with pytest.raises(LLMServerError) as info:
        client.complete("mock:m", "x", timeout=1.0)
    assert time.sleeps == [0.25, 0.5] and info.value.attempts == 3  # a 1.0 s wait does not fit in 0.25 s


# -- real time: a hang or a stall ends at the deadline -----------------------------------


def _hanging_client(staller: Staller) -> llmplex.Client:
    """The stalling provider's client, its config, observers and provider plugin loaded by a first call (not a
    stream: nothing stalls) before any test's clock starts: cold, a first call could not send within a 0.3 s
    deadline on a loaded machine (``route`` alone left the observers to load: 5 of 100 async stalls ended
    "while loading the provider plugin" beside 3 CPU hogs)."""
    client = llmplex.Client(plugins=[staller])
    client.complete("mock:m", "warm up")
    return client


class HeldClock:
    """The clock of a deadline that stands still until ``start()``, then runs with the monotonic clock: a deadline
    of ``seconds`` on it passes ``seconds`` after ``start()``. A stalling-stream test starts it once it has seen the
    events before the stall, so that they arrive before the deadline however long the machine makes them take
    (with the clock running from the call, a 0.3 s deadline beside 3 CPU hogs passed before the first event
    arrived 3 times in 200 runs)."""

    def __init__(self) -> None:
        self._origin = real_time.monotonic()
        self._started: float | None = None

    def monotonic(self) -> float:
        started = self._started
        return self._origin if started is None else self._origin + real_time.monotonic() - started

    def deadline(self, seconds: float) -> Deadline:
        return Deadline.after(seconds, Clock(monotonic=self.monotonic))

    def start(self, seconds: float) -> Late:
        """Start the clock; the ``Late`` of the deadline of ``seconds`` (made in the caller's thread, as it wants)."""
        self._started = real_time.monotonic()
        return Late(Deadline.after(seconds, since=self._started))


def _assert_on_time(late: Late) -> None:
    """Not before the deadline, and within ``OVERRUN`` of it on llmplex's own account (``tests.support.late``:
    the time a busy machine keeps the caller waiting for a CPU is not counted)."""
    assert real_time.monotonic() - late.deadline.at >= -0.005, "ended before the deadline"
    seconds = late.seconds()
    assert seconds < OVERRUN, late.describe(seconds)


def _run(client: llmplex.Client, mode: str, late: Late) -> object:
    deadline = late.deadline
    if mode == "complete":
        return client.complete("mock:m", "x", deadline=deadline)
    if mode == "stream":
        return _consume(client.stream("mock:m", "x", deadline=deadline))

    async def call() -> object:
        late.on_loop()
        if mode == "acomplete":
            return await client.acomplete("mock:m", "x", deadline=deadline)
        return await _aconsume(client.astream("mock:m", "x", deadline=deadline))

    return asyncio.run(call())


@pytest.mark.parametrize("mode", ["complete", "acomplete", "stream", "astream"])
def test_a_hanging_provider_ends_at_the_deadline(mode: str) -> None:
    client = llmplex.Client()
    client.provider_client("mock").push("late", delay=3.0)
    late = Late.after(0.3)
    with pytest.raises(LLMDeadlineExceededError) as info:
        _run(client, mode, late)
    _assert_on_time(late)
    assert info.value.attempts == 1 and not info.value.retryable


def test_a_sync_stream_that_stalls_ends_with_the_deadline_error_after_its_events() -> None:
    staller = Staller(after=2, seconds=30)  # silent until released (below), or 30 s
    client = _hanging_client(staller)
    seen: list[str] = []
    clock = HeldClock()
    lates: list[Late] = []

    def read() -> None:
        for event in client.stream("mock:m", "one two three four", deadline=clock.deadline(0.3)):
            seen.append(event.text)
            if len(seen) == 2:  # the events before the stall are here: the deadline's 0.3 s start now
                lates.append(clock.start(0.3))

    try:
        with pytest.raises(LLMDeadlineExceededError, match="before an answer arrived"):
            read()
        _assert_on_time(lates[0])
    finally:
        staller.release.set()  # the abandoned worker thread ends
    assert seen == ["one", " two"]


async def test_an_async_stream_that_stalls_ends_with_the_deadline_error() -> None:
    client = _hanging_client(Staller(after=1, seconds=30))  # the deadline cancels the stall's sleep
    seen: list[str] = []
    clock = HeldClock()
    lates: list[Late] = []

    async def read() -> None:
        async for event in client.astream("mock:m", "one two three", deadline=clock.deadline(0.3)):
            seen.append(event.text)
            if len(seen) == 1:  # the event before the stall is here: the deadline's 0.3 s start now
                lates.append(clock.start(0.3))
                lates[0].on_loop()

    with pytest.raises(LLMDeadlineExceededError):
        await read()
    assert seen == ["one"]
    _assert_on_time(lates[0])


def test_a_stream_that_beats_the_deadline_is_untouched() -> None:
    client = llmplex.Client()
    events = _consume(client.stream("mock:m", "quick answer", timeout=5))
    assert events[-1].response is not None and events[-1].response.text == "quick answer"


def test_a_stream_abandoned_early_releases_its_reader() -> None:
    client = _hanging_client(Staller(after=5))
    stream = client.stream("mock:m", "a b c d e f g", timeout=5)
    assert next(stream).text == "a"
    stream.close()  # the worker thread stops after its current read and closes the provider's iterator


def test_deadlines_work_across_the_sync_async_bridge(client: llmplex.Client) -> None:
    assert client.complete("asynconly:m", "x y", timeout=5).text == "async:x y"
    assert [e.text for e in client.stream("asynconly:m", "x y", timeout=5) if e.type == "text"] == ["x", "y"]
    assert asyncio.run(client.acomplete("synconly:m", "p", timeout=5)).text.startswith("p|")
    assert asyncio.run(_aconsume(client.astream("synconly:m", "p q", timeout=5)))[-1].response is not None
