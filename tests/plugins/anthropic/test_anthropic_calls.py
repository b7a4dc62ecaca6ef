"""End to end through ``llmplex.Client`` and the real anthropic SDK, over a fake network."""

from __future__ import annotations

import json

import anthropic
import pytest
from llmplex_anthropic.hooks import llmplex_parse_event

import llmplex
from llmplex.types import Message, OutputSchema, Request, StreamEvent, StreamState, Tool, ToolCall
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http
from tests.plugins.anthropic.wire import (
    MODEL,
    check_create_params,
    message,
    stream_body,
    text_block,
    tool_use_block,
    usage,
)

__all__ = ["fake_http"]

KEY = "sk-ant-test-0123456789abcdef"
WEATHER = Tool(
    name="get_weather",
    description="Weather of a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CITY = OutputSchema(
    name="city",
    json_schema={
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False,
    },
)


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return llmplex.Client(throttle={"max_attempts": 1})


def test_text_answer_with_usage_and_ids(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=message([text_block("Hello!")], message_usage=usage(10, 4)))
    response = llm.complete(f"anthropic:{MODEL}", "Say hi", system="Be brief.")
    assert response.text == "Hello!"
    assert response.finish_reason == "stop"
    assert response.usage.input_tokens == 10
    assert response.usage.output_tokens == 4
    assert response.usage.total_tokens == 14
    assert response.provider == "anthropic"
    assert response.model == MODEL
    assert response.response_id == "msg_01XFDUDYJgAACzvnptvVoYEL"
    sent = fake_http.last()
    assert sent.url == "https://api.anthropic.com/v1/messages"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["x-stainless-retry-count"] == "0"
    assert sent.json()["system"] == "Be brief."
    assert sent.json()["max_tokens"] == 4096
    check_create_params(sent.json())


def test_cache_tokens_count_as_input_and_cache_reads_as_cached(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=message(message_usage=usage(3, 5, cache_read=100, cache_creation=20)))
    response = llm.complete(f"anthropic:{MODEL}", "Hi")
    assert response.usage.input_tokens == 123
    assert response.usage.cached_tokens == 100
    assert response.usage.total_tokens == 128


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("pause_turn", "other"),
    ],
)
def test_stop_reasons(llm: llmplex.Client, fake_http: FakeHTTP, stop_reason: str, finish: str) -> None:
    fake_http.reply(json_body=message(stop_reason=stop_reason))
    assert llm.complete(f"anthropic:{MODEL}", "Hi").finish_reason == finish


def test_refusal_keeps_the_explanation(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": "This could enable malware."}
    fake_http.reply(json_body=message([text_block("")], stop_reason="refusal", stop_details=details))
    response = llm.complete(f"anthropic:{MODEL}", "Write malware")
    assert response.finish_reason == "refusal"
    assert response.refusal == "This could enable malware."


async def test_async_call(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=message([text_block("async hi")]))
    response = await llm.acomplete(f"anthropic:{MODEL}", "Hi", max_tokens=20)
    assert response.text == "async hi"
    assert fake_http.last().json()["max_tokens"] == 20


def test_tool_round_trip(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    call = tool_use_block("get_weather", {"city": "Paris"}, "toolu_01")
    fake_http.reply(json_body=message([text_block("Let me check."), call], stop_reason="tool_use"))
    first = llm.complete(f"anthropic:{MODEL}", "Weather in Paris?", tools=[WEATHER])
    assert first.finish_reason == "tool_calls"
    assert first.tool_calls == (ToolCall(id="toolu_01", name="get_weather", arguments='{"city": "Paris"}'),)

    fake_http.reply(json_body=message([text_block("Sunny in Paris.")]))
    history = [Message.user("Weather in Paris?"), first.message(), Message.tool("toolu_01", "sunny, 24C")]
    second = llm.complete(f"anthropic:{MODEL}", history, tools=[WEATHER])
    assert second.text == "Sunny in Paris."
    body = fake_http.last().json()
    check_create_params(body)
    assert body["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_01",
        "name": "get_weather",
        "input": {"city": "Paris"},
    }
    assert body["messages"][2] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "sunny, 24C"}],
    }


def test_tool_handlers_run_in_cores_loop(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    tool = WEATHER.model_copy(update={"handler": get_weather})
    fake_http.reply(
        json_body=message([tool_use_block("get_weather", {"city": "Rome"}, "toolu_9")], stop_reason="tool_use")
    )
    fake_http.reply(json_body=message([text_block("It is sunny in Rome.")]))
    response = llm.complete(f"anthropic:{MODEL}", "Weather in Rome?", tools=[tool])
    assert response.text == "It is sunny in Rome."
    result_turn = fake_http.last().json()["messages"][-1]
    assert result_turn["content"][0]["tool_use_id"] == "toolu_9"
    assert "sunny in Rome" in result_turn["content"][0]["content"]


def test_native_structured_output(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=message([text_block('{"name": "Paris"}')]))
    response = llm.complete(f"anthropic:{MODEL}", "Capital of France?", output=CITY)
    assert response.output == {"name": "Paris"}
    body = fake_http.last().json()
    assert body["output_config"]["format"] == {"type": "json_schema", "schema": CITY.json_schema}
    check_create_params(body)


def test_structured_output_through_a_forced_tool(monkeypatch: pytest.MonkeyPatch, fake_http: FakeHTTP) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    llm = llmplex.Client(providers={"anthropic": {"structured_output": "tool"}})
    fake_http.reply(json_body=message([tool_use_block("city", {"name": "Paris"})], stop_reason="tool_use"))
    response = llm.complete(f"anthropic:{MODEL}", "Capital of France?", output=CITY)
    assert response.output == {"name": "Paris"}
    assert response.tool_calls == ()
    assert response.finish_reason == "stop"
    assert fake_http.last().json()["tool_choice"] == {"type": "tool", "name": "city"}


def _collect(events: list[StreamEvent]) -> tuple[str, StreamEvent]:
    return "".join(e.text for e in events if e.type == "text"), events[-1]


def test_stream_text_usage_and_finish(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply_stream(
        stream_body(
            [{"text": ["Hel", "lo"]}],
            start_usage={"input_tokens": 25, "output_tokens": 1, "cache_read_input_tokens": 5},
            output_tokens=7,
        )
    )
    events = list(llm.stream(f"anthropic:{MODEL}", "Hi"))
    text, last = _collect(events)
    assert text == "Hello"
    assert [e.type for e in events] == ["text", "text", "usage", "finish", "response"]
    assert last.response is not None
    assert last.response.text == "Hello"
    assert last.response.usage.input_tokens == 30
    assert last.response.usage.cached_tokens == 5
    assert last.response.usage.output_tokens == 7
    assert last.response.finish_reason == "stop"
    assert last.response.response_id == "msg_01StreamedAnswer"
    body = fake_http.last().json()
    assert body["stream"] is True
    check_create_params(body, stream=True)


async def test_async_stream_assembles_tool_calls(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply_stream(
        stream_body(
            [
                {"text": ["Checking."]},
                {"tool_use": ("toolu_a", "get_weather"), "json": ['{"city": ', '"Paris"}']},
                {"tool_use": ("toolu_b", "get_weather"), "json": ['{"city": "Rome"}']},
            ],
            stop_reason="tool_use",
        )
    )
    events = [e async for e in llm.astream(f"anthropic:{MODEL}", "Weather?", tools=[WEATHER])]
    final = events[-1].response
    assert final is not None
    assert final.finish_reason == "tool_calls"
    assert final.tool_calls == (
        ToolCall(id="toolu_a", name="get_weather", arguments='{"city": "Paris"}'),
        ToolCall(id="toolu_b", name="get_weather", arguments='{"city": "Rome"}'),
    )
    first_piece = next(e for e in events if e.type == "tool_call")
    assert first_piece.tool_call_index == 0
    assert (first_piece.tool_call_id, first_piece.tool_name) == ("toolu_a", "get_weather")


def test_stream_of_the_forced_output_tool_is_text(fake_http: FakeHTTP) -> None:
    fake_http.reply_stream(
        stream_body([{"tool_use": ("toolu_o", "city"), "json": ['{"name"', ': "Paris"}']}], stop_reason="tool_use")
    )
    raw = anthropic.Anthropic(api_key=KEY, max_retries=0).messages.create(
        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "?"}], stream=True
    )
    state = StreamState(Request(model=MODEL, messages=(Message.user("?"),), output=CITY))
    events = [e for event in raw for e in llmplex_parse_event(event, state)]
    assert "".join(e.text for e in events if e.type == "text") == '{"name": "Paris"}'
    assert not [e for e in events if e.type == "tool_call"]
    assert [e.finish_reason for e in events if e.type == "finish"] == ["stop"]


def test_timeout_reaches_the_sdk_per_call(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(json_body=message())
    llm.complete(f"anthropic:{MODEL}", "Hi", timeout=12.5)
    assert 0 < float(fake_http.last().headers["x-stainless-timeout"]) <= 12.5


def test_local_instance_needs_no_key_and_ignores_the_cloud_key(
    monkeypatch: pytest.MonkeyPatch, fake_http: FakeHTTP
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    llm = llmplex.Client(providers={"local-anthropic": {"plugin": "anthropic", "base_url": "http://127.0.0.1:9"}})
    fake_http.reply(json_body=message([text_block("local")]))
    assert llm.complete("local-anthropic:gemma", "Hi").text == "local"
    sent = fake_http.last()
    assert sent.url == "http://127.0.0.1:9/v1/messages"
    assert KEY not in json.dumps(sent.headers)


def test_missing_key_is_a_configuration_error_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(llmplex.LLMConfigurationError, match="ANTHROPIC_API_KEY"):
        llmplex.Client().complete(f"anthropic:{MODEL}", "Hi")
