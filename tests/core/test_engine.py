"""The pipeline on the mock provider: complete, stream, async, bridging, errors, retries, events."""

from __future__ import annotations

import asyncio
import logging

import pytest

import llmplex
from llmplex import LLMConfigurationError, LLMRateLimitError, ThrottlePolicy
from llmplex.providers.mock import MockBackend
from tests.reliability.fakes import FakeTime


def test_echo_with_usage_and_metadata(client: llmplex.Client) -> None:
    response = client.complete("mock:echo", "hello big world")
    assert response.text == "hello big world"
    assert (response.provider, response.model, response.finish_reason) == ("mock", "echo", "stop")
    assert response.usage.model_dump(include={"input_tokens", "output_tokens", "total_tokens"}) == {
        "input_tokens": 3,
        "output_tokens": 3,
        "total_tokens": 6,
    }
    assert response.attempts == 1 and response.latency >= 0 and response.response_id == "mock-1"


def test_only_given_options_reach_the_payload(client: llmplex.Client, mock_backend: MockBackend) -> None:
    client.complete("mock:echo", "a b c", temperature=0.2, max_tokens=2, top_p=None)
    assert mock_backend.calls[-1]["options"] == {"temperature": 0.2, "max_tokens": 2}


def test_max_tokens_truncates_with_length(client: llmplex.Client) -> None:
    response = client.complete("mock:echo", "one two three four", max_tokens=2)
    assert (response.text, response.finish_reason) == ("one two", "length")


def test_messages_system_and_dicts(client: llmplex.Client, mock_backend: MockBackend) -> None:
    client.complete(
        "mock:echo",
        [{"role": "user", "content": "hi"}, llmplex.Message.assistant("hello"), {"role": "user", "content": "again"}],
        system="be brief",
    )
    roles = [m["role"] for m in mock_backend.calls[-1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]


def test_scripted_answer_with_tool_calls(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push(
        tool_calls=[{"name": "lookup", "arguments": '{"q": "x"}'}], usage={"input_tokens": 5, "output_tokens": 1}
    )
    tool = {
        "name": "lookup",
        "description": "Find",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
    response = client.complete("mock:m", "find x", tools=[tool], tool_choice="lookup")
    assert response.finish_reason == "tool_calls"
    assert response.tool_calls[0].name == "lookup" and response.tool_calls[0].parsed_arguments() == {"q": "x"}
    assert mock_backend.calls[-1]["tool_choice"] == "lookup"


def test_tool_choice_must_name_a_given_tool(client: llmplex.Client) -> None:
    with pytest.raises(LLMConfigurationError, match="tool_choice 'nope'"):
        client.complete("mock:m", "x", tools=[{"name": "a"}], tool_choice="nope")


@pytest.mark.parametrize(
    "error",
    [
        llmplex.LLMQuotaExhaustedError("no quota", status_code=429),
        llmplex.LLMBadRequestError("bad", status_code=400),
        llmplex.LLMRefusalError("no", refusal="I can't"),
    ],
)
def test_non_retryable_scripted_errors_surface_after_one_attempt(
    client: llmplex.Client, mock_backend: MockBackend, error: llmplex.LLMError
) -> None:
    mock_backend.push_error(error)
    with pytest.raises(type(error)) as info:
        client.complete("mock:m", "x")
    assert info.value.attempts == 1 and info.value.provider == "mock" and info.value.model == "m"
    assert len(mock_backend.calls) == 1


def test_retryable_errors_are_retried_with_backoff_then_succeed() -> None:
    time = FakeTime()
    client = llmplex.Client(clock=time.clock())
    backend = client.provider_client("mock")
    backend.push_error(LLMRateLimitError("slow", retry_after=None))
    backend.push_error(llmplex.LLMServerError("overloaded"))
    backend.push("finally")
    response = client.complete("mock:m", "x")
    assert (response.text, response.attempts) == ("finally", 3)
    assert time.sleeps == [0.25, 0.5]  # draw 0.5 of base 0.5 * 2**(n-1)


def test_retry_after_sets_the_minimum_wait_and_attempts_are_bounded() -> None:
    time = FakeTime(draw=0.0)
    client = llmplex.Client(clock=time.clock())
    backend = client.provider_client("mock")
    for _ in range(3):
        backend.push_error(LLMRateLimitError("slow", retry_after=1.5))
    with pytest.raises(LLMRateLimitError) as info:
        client.complete("mock:m", "x", throttle=ThrottlePolicy(max_attempts=3))
    assert time.sleeps == [1.5, 1.5] and info.value.attempts == 3


async def test_async_complete_and_retry() -> None:
    time = FakeTime()
    client = llmplex.Client(clock=time.clock())
    backend = client.provider_client("mock")
    backend.push_error(llmplex.LLMConnectionError("reset"))
    response = await client.acomplete("mock:echo", "async works")
    assert (response.text, response.attempts, time.sleeps) == ("async works", 2, [0.25])


def test_sync_and_async_share_one_mock_backend(client: llmplex.Client) -> None:
    assert client.provider_client("mock", asynchronous=True) is client.provider_client("mock")


def test_stream_assembles_the_same_response_as_complete(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push(
        "a streamed answer",
        tool_calls=[{"name": "f", "arguments": "{}", "id": "c1"}],
        usage={"input_tokens": 2, "output_tokens": 3},
    )
    events = list(client.stream("mock:m", "x"))
    assert "".join(e.text for e in events if e.type == "text") == "a streamed answer"
    final = events[-1].response
    assert events[-1].type == "response" and final is not None
    mock_backend.push(
        "a streamed answer",
        tool_calls=[{"name": "f", "arguments": "{}", "id": "c1"}],
        usage={"input_tokens": 2, "output_tokens": 3},
    )
    whole = client.complete("mock:m", "x")
    keys = {"text", "tool_calls", "finish_reason", "usage", "model", "provider"}
    assert final.model_dump(include=keys) == whole.model_dump(include=keys)


async def test_astream_yields_text_then_response(client: llmplex.Client) -> None:
    events = [e async for e in client.astream("mock:echo", "one two")]
    assert [e.text for e in events if e.type == "text"] == ["one", " two"]
    assert events[-1].response is not None and events[-1].response.text == "one two"


def test_stream_retries_failures_before_the_first_event() -> None:
    time = FakeTime()
    client = llmplex.Client(clock=time.clock())
    client.provider_client("mock").push_error(llmplex.LLMServerError("503"))
    events = list(client.stream("mock:echo", "recovered"))
    assert events[-1].response is not None and events[-1].response.attempts == 2


def test_sync_only_provider_is_bridged_for_async(client: llmplex.Client) -> None:
    sync = client.complete("synconly:m", "a b")
    bridged = asyncio.run(client.acomplete("synconly:m", "a b"))
    assert sync.text == "a b|MainThread"
    assert bridged.text.startswith("a b|") and bridged.text != sync.text  # ran in a worker thread


def test_async_only_provider_is_bridged_for_sync(client: llmplex.Client) -> None:
    assert client.complete("asynconly:m", "x y").text == "async:x y"
    assert [e.text for e in client.stream("asynconly:m", "x y") if e.type == "text"] == ["x", "y"]


async def test_async_only_provider_inside_a_running_loop(client: llmplex.Client) -> None:
    assert (await client.acomplete("asynconly:m", "z")).text == "async:z"
    assert [e.text async for e in client.astream("synconly:m", "p q") if e.type == "text"] == ["p", "q"]


def test_provider_without_stream_hooks_streams_its_complete_answer(client: llmplex.Client) -> None:
    events = list(client.stream("good:m", "hi"))
    assert [e.type for e in events] == ["text", "response"] and events[0].text.startswith("HI")


def test_unexpected_provider_exceptions_become_llm_errors(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push_error(KeyError("surprise"))
    with pytest.raises(llmplex.LLMError, match="unexpected provider failure: KeyError") as info:
        client.complete("mock:m", "x")
    assert isinstance(info.value.__cause__, KeyError)


def test_timeouts_and_connection_errors_are_classified_by_type() -> None:
    client = llmplex.Client(throttle={"max_attempts": 1})
    backend = client.provider_client("mock")
    backend.push_error(TimeoutError("slow"))
    with pytest.raises(llmplex.LLMTimeoutError):
        client.complete("mock:m", "x")
    backend.push_error(ConnectionResetError("reset"))
    with pytest.raises(llmplex.LLMConnectionError):
        client.complete("mock:m", "x")


def test_events_are_logged_under_the_llmplex_logger(client: llmplex.Client, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="llmplex"):
        client.complete("mock:echo", "logged")
    records = [r for r in caplog.records if r.name == "llmplex"]
    assert [r.getMessage() for r in records] == [
        "prompt.call.start", "prompt.rendered", "prompt.call.end", "prompt.call.done"
    ]  # fmt: skip
    assert records[-1].llmplex["usage"]["output_tokens"] == 1  # type: ignore[attr-defined]


def test_bad_input_is_a_typed_error(client: llmplex.Client) -> None:
    with pytest.raises(LLMConfigurationError, match=r"messages\[0\] is not a valid message"):
        client.complete("mock:m", [{"role": "robot", "content": "x"}])
    with pytest.raises(LLMConfigurationError, match="prompt must be a string"):
        client.complete("mock:m", 42)  # type: ignore[arg-type]
    with pytest.raises(LLMConfigurationError, match="no messages"):
        client.complete("mock:m", [])
    with pytest.raises(LLMConfigurationError, match="temperature"):
        client.complete("mock:m", "x", temperature=5)


def test_module_level_functions_use_the_default_client() -> None:
    assert llmplex.complete("mock:echo", "module level").text == "module level"
    assert llmplex.default_client() is llmplex.default_client()


def test_a_proxy_failure_is_a_retryable_connection_error() -> None:
    import httpx

    client = llmplex.Client(throttle={"max_attempts": 1})
    client.provider_client("mock").push_error(httpx.ProxyError("proxy refused the tunnel"))
    with pytest.raises(llmplex.LLMConnectionError) as info:
        client.complete("mock:m", "x")
    assert info.value.retryable


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"tools": [{"name": "lookup"}]}, "does not support tools"),
        ({"previous_response_id": "resp_1"}, "keeps no stored responses"),
    ],
)
def test_requests_needing_what_the_provider_lacks_are_refused_before_sending(
    client: llmplex.Client, kwargs: dict[str, object], problem: str
) -> None:
    from llmplex_testplugins import recorder

    recorder.EVENTS.clear()
    with pytest.raises(LLMConfigurationError, match=problem):
        client.complete("good:m", "hi", **kwargs)  # type: ignore[arg-type]  # good: no tools, no chains
    kinds = [type(e).__name__ for e in recorder.EVENTS]
    assert kinds == ["RequestStarted", "RequestFailed", "CallEnded"]  # never rendered
