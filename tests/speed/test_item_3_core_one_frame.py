"""Issue 34 item 3: an async call to one model is one or two coroutine frames fewer while it is in flight.

A call with no group, no hedge and nothing to fall back to is its pipeline's own coroutine (``Call.acomplete``
hands on ``Pipeline.acomplete(call)``), which ends the call as ``Call``'s loop did: the answer told to its
recorders, a failure raised as the call's error (every failed attempt in ``context["errors"]``, ``RequestFailed``
and ``CallEnded`` emitted), and the route released however the call ends (answered, failed or cancelled). A call
with fallbacks or a group still runs through ``Call``'s loop. ``llmplex.acomplete`` awaits the call's answer
itself (``Client._answer``: no ``Client.acomplete`` coroutine in between); both stay coroutine functions, and what
they raise is raised when awaited.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

import llmplex
from llmplex import LLMRateLimitError
from tests.support.one_model_failure import assert_failed_as_the_call, fail_twice


def _chain(task: asyncio.Task[Any]) -> list[str]:
    """The qualified names of the coroutines the task is suspended in, outermost first."""
    names, awaited = [], task.get_coro()
    while awaited is not None and hasattr(awaited, "cr_code"):
        names.append(awaited.__qualname__)
        awaited = awaited.cr_await
    return names


async def _in_flight(
    client: llmplex.Client, facade: bool = False, **kwargs: Any
) -> tuple[list[str], asyncio.Task[Any]]:
    client.provider_client("mock").push("slow", delay=600.0)  # cancelled long before: nothing waits on the clock
    run = llmplex.acomplete if facade else client.acomplete
    task = asyncio.ensure_future(run("mock:m", "hi", **kwargs))
    for _ in range(5):
        await asyncio.sleep(0)
    return _chain(task), task


async def test_item_3_a_one_model_call_in_flight_is_its_pipelines_coroutine(
    client: llmplex.Client, closed: list[str]
) -> None:
    names, task = await _in_flight(client)
    assert names[:2] == ["Client.acomplete", "Pipeline.acomplete"]  # no Call coroutine between them
    assert not any(name.startswith("Call.") for name in names)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed[-1] == "close"  # released when cancelled


async def test_item_3_a_call_with_fallbacks_still_runs_through_the_call(client: llmplex.Client) -> None:
    names, task = await _in_flight(client, fallbacks=["mock:other"])
    assert names[:3] == ["Client.acomplete", "Call._acomplete", "Pipeline.acomplete"]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_item_3_one_model_answer_is_recorded_then_released(client: llmplex.Client, closed: list[str]) -> None:
    response = await client.acomplete("mock:m", "hello there")
    assert response.text == "hello there" and response.attempts == 1
    assert closed[-3:] == ["PromptExecuted", "CallEnded", "close"]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_item_3_one_model_failure_is_the_calls_error_as_before(
    client: llmplex.Client, closed: list[str], asynchronous: bool
) -> None:
    """The async call fails as the sync one (whose path is unchanged): the same error, attempts and events."""
    throttle = fail_twice(client)

    def run() -> object:
        if asynchronous:
            return asyncio.run(client.acomplete("mock:m", "hi", throttle=throttle))
        return client.complete("mock:m", "hi", throttle=throttle)

    with pytest.raises(LLMRateLimitError) as info:
        run()
    assert_failed_as_the_call(info.value, closed)


async def test_item_3_the_facades_one_model_call_holds_no_client_coroutine() -> None:
    names, task = await _in_flight(llmplex.default_client(), facade=True)
    assert names[:2] == ["acomplete", "Pipeline.acomplete"]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_item_3_acomplete_stays_a_coroutine_function_raising_when_awaited(client: llmplex.Client) -> None:
    assert inspect.iscoroutinefunction(llmplex.acomplete) and inspect.iscoroutinefunction(client.acomplete)
    for made in (llmplex.acomplete("nosuchprovider:m", "hi"), client.acomplete("nosuchprovider:m", "hi")):
        with pytest.raises(llmplex.LLMConfigurationError):
            await made
