"""Issue 34 item 5 (the gateway's first streamed chunk; item 4): a stream to one model, async or sync, is one
generator layer fewer for each of its events.

A call with no group, no hedge and nothing to fall back to streams as its pipeline's own generator
(``Call.astream`` hands on ``Pipeline.astream(call)``, ``Call.stream`` ``Pipeline.stream(call)``), which ends the
call as ``Call``'s loop did: the answer told to its recorders, a failure raised as the call's error (every failed
attempt in ``context["errors"]``, ``RequestFailed`` and ``CallEnded`` emitted), and the route released once however
the stream ends (read to the end, failed, abandoned or cancelled), an abandoned stream settled as cut off once. A
call with fallbacks or a group still streams through ``Call``'s loop.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import llmplex
from llmplex import Budget, BudgetTracker, LLMRateLimitError, StreamEvent, UsageUnknown
from llmplex.engine.fallback import Call
from llmplex.engine.pipeline import Pipeline
from llmplex.testing.observe import Observed
from tests.support.one_model_failure import assert_failed_as_the_call, fail_twice


def _budgeted() -> tuple[llmplex.Client, BudgetTracker, Observed]:
    tracker, observed = BudgetTracker(Budget(max_total_tokens=10**6)), Observed()
    return llmplex.Client(budget=tracker, plugins=[observed]), tracker, observed


def _code(stream: Any) -> Any:
    return stream.ag_code if hasattr(stream, "ag_code") else stream.gi_code


async def test_item_5_a_one_model_stream_is_its_pipelines_own_generator(
    client: llmplex.Client, closed: list[str]
) -> None:
    stream = client.astream("mock:m", "hello there")
    assert _code(stream) is Pipeline.astream.__code__  # no Call generator in between
    events = [event async for event in stream]
    assert [event.type for event in events] == ["text", "text", "usage", "finish", "response"]
    response = events[-1].response
    assert response is not None and response.text == "hello there" and response.attempts == 1
    assert closed[-3:] == ["PromptExecuted", "CallEnded", "close"]  # told, then released
    assert closed.count("close") == 1


def test_item_5_the_gateways_stream_call_streams_as_its_pipeline(client: llmplex.Client) -> None:
    call = client.stream_call("mock:m", "hi")
    stream = call.astream()
    assert _code(stream) is Pipeline.astream.__code__
    asyncio.run(stream.aclose())  # type: ignore[attr-defined]


def test_item_5_a_stream_with_fallbacks_still_runs_through_the_call(client: llmplex.Client) -> None:
    stream = client.astream("mock:m", "hi", fallbacks=["mock:other"])
    assert _code(stream) is Call._astream.__code__
    asyncio.run(stream.aclose())  # type: ignore[attr-defined]
    assert _code(client.stream("mock:m", "hi", fallbacks=["mock:other"])) is Call._stream.__code__


def test_item_5_a_one_model_sync_stream_is_its_pipelines_own_generator(
    client: llmplex.Client, closed: list[str]
) -> None:
    stream = client.stream("mock:m", "hello there")
    assert _code(stream) is Pipeline.stream.__code__  # no Call generator in between
    events = list(stream)
    assert [event.type for event in events] == ["text", "text", "usage", "finish", "response"]
    response = events[-1].response
    assert response is not None and response.text == "hello there" and response.attempts == 1
    assert closed[-3:] == ["PromptExecuted", "CallEnded", "close"]
    assert closed.count("close") == 1


def test_item_5_an_abandoned_one_model_sync_stream_is_cut_off_and_released_once(closed: list[str]) -> None:
    client, tracker, observed = _budgeted()
    stream = client.stream("mock:m", "one two three four")
    assert next(iter(stream)).type == "text"
    stream.close()  # type: ignore[attr-defined]
    assert closed.count("close") == 1
    (unknown,) = [e for e in observed.events if isinstance(e, UsageUnknown)]
    assert "the stream was abandoned" in unknown.reason
    assert tracker.snapshot().requests == 1


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_item_5_one_model_stream_failure_is_the_calls_error_as_before(
    client: llmplex.Client, closed: list[str], asynchronous: bool
) -> None:
    """The async stream fails as the sync one (whose path is unchanged): the same error, attempts and events."""
    throttle = fail_twice(client)

    def run() -> list[StreamEvent]:
        if asynchronous:

            async def read() -> list[StreamEvent]:
                return [event async for event in client.astream("mock:m", "hi", throttle=throttle)]

            return asyncio.run(read())
        return list(client.stream("mock:m", "hi", throttle=throttle))

    with pytest.raises(LLMRateLimitError) as info:
        run()
    assert_failed_as_the_call(info.value, closed)


async def test_item_5_an_abandoned_one_model_stream_is_cut_off_and_released_once(closed: list[str]) -> None:
    client, tracker, observed = _budgeted()
    stream = client.astream("mock:m", "one two three four")
    async for event in stream:
        assert event.type == "text"
        break
    await stream.aclose()  # type: ignore[attr-defined]
    assert closed.count("close") == 1
    (unknown,) = [e for e in observed.events if isinstance(e, UsageUnknown)]
    assert "the stream was abandoned" in unknown.reason
    assert tracker.snapshot().requests == 1
    assert not any(type(e).__name__ == "CallEnded" for e in observed.events)  # no answer to record


async def test_item_5_a_cancelled_one_model_stream_is_released_once(closed: list[str]) -> None:
    client, tracker, _observed = _budgeted()
    client.provider_client("mock").push("slow", delay=600.0)  # cancelled long before: nothing waits on the clock
    stream = client.astream("mock:m", "hi")

    async def read() -> None:
        async for _event in stream:
            pass

    task = asyncio.ensure_future(read())
    for _ in range(5):
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed.count("close") == 1
    assert tracker.snapshot().total_tokens == 0  # cancelled before answering: no tokens spent, the reservation back
