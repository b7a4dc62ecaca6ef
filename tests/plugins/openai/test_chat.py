"""Chat Completions through the public API: a config instance (``local:``) and ``openai:`` with api = "chat"."""

from __future__ import annotations

import json

import pytest

import llmplex
from llmplex import Message, ToolCall
from tests.contract import fixtures_openai as fx
from tests.plugins.openai.conftest import API_KEY, FakeAPI

CHAT = "/chat/completions"
WEATHER = {
    "name": "get_weather",
    "description": "Current weather in a city",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
}


def test_text_answer_with_system_prompt_usage_and_ids(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.reply(CHAT, fx.chat_completion("Bonjour!", usage=fx.TokenUsage(12, 3, 8, 2)))

    response = llm.complete("local:gemma3", "Say hi in French", system="Be terse.")

    assert response.text == "Bonjour!"
    assert response.finish_reason == "stop"
    assert (response.provider, response.model, response.response_id) == ("local", fx.MODEL, fx.CHAT_ID)
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (12, 3, 15)
    assert (usage.cached_tokens, usage.reasoning_tokens) == (8, 2)
    assert local_api.bodies == [
        {
            "model": "gemma3",
            "messages": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Say hi in French"}],
        }
    ]


def test_usage_without_token_details_as_llama_cpp_sends_it(llm: llmplex.Client, local_api: FakeAPI) -> None:
    body = fx.chat_completion("Hi", usage=fx.TokenUsage(12, 3))
    body["usage"] = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    local_api.reply(CHAT, body)

    usage = llm.complete("local:gemma3", "hi").usage

    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (12, 3, 15)
    assert (usage.cached_tokens, usage.reasoning_tokens) == (0, 0)


def test_only_set_options_reach_the_wire_and_max_tokens_keeps_its_name_for_other_servers(
    llm: llmplex.Client, local_api: FakeAPI
) -> None:
    local_api.reply(CHAT, fx.chat_completion())

    llm.complete("local:m", "hi", temperature=0.2, max_tokens=64, stop=["\n"], seed=7, presence_penalty=0.5)

    body = local_api.bodies[0]
    assert {k: v for k, v in body.items() if k not in ("model", "messages")} == {
        "temperature": 0.2,
        "max_tokens": 64,
        "stop": ["\n"],
        "seed": 7,
        "presence_penalty": 0.5,
    }


def test_openai_with_chat_api_sends_max_completion_tokens(openai_api: FakeAPI) -> None:
    openai_api.reply(CHAT, fx.chat_completion())
    llm = llmplex.Client(providers={"openai": {"api": "chat"}})

    llm.complete("openai:gpt-4o-mini", "hi", max_tokens=32, frequency_penalty=0.1)

    body = openai_api.bodies[0]
    assert body["max_completion_tokens"] == 32
    assert "max_tokens" not in body
    assert body["frequency_penalty"] == 0.1
    assert openai_api.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


def test_multi_turn_with_tools_tool_choice_and_tool_results(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.reply(CHAT, fx.chat_completion("It is 18C and sunny in Paris."))
    history = [
        Message.user("Weather in Paris?"),
        Message.assistant(None, (ToolCall(id="call_1", name="get_weather", arguments='{"location":"Paris"}'),)),
        Message.tool("call_1", "18C, sunny", name="get_weather"),
    ]

    response = llm.complete("local:m", history, tools=[WEATHER], tool_choice="get_weather")

    assert response.text == "It is 18C and sunny in Paris."
    body = local_api.bodies[0]
    assert body["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "18C, sunny"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": WEATHER["parameters"],
                "description": "Current weather in a city",
            },
        }
    ]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}


def test_tool_calls_in_the_answer(llm: llmplex.Client, local_api: FakeAPI) -> None:
    calls = [fx.FunctionCall(), fx.FunctionCall("get_time", '{"tz":"CET"}', "call_2")]
    local_api.reply(CHAT, fx.chat_completion_tool_calls(*calls))

    response = llm.complete("local:m", "Weather and time in Paris?", tools=[WEATHER], tool_choice="required")

    assert response.finish_reason == "tool_calls"
    assert response.tool_calls == (
        ToolCall(id=fx.CALL_ID, name="get_weather", arguments='{"location":"Paris, France"}'),
        ToolCall(id="call_2", name="get_time", arguments='{"tz":"CET"}'),
    )
    assert local_api.bodies[0]["tool_choice"] == "required"


def test_truncated_answer_is_a_length_finish(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.reply(CHAT, fx.chat_completion_truncated("Once upon"))

    response = llm.complete("local:m", "Tell a story", max_tokens=2)

    assert (response.text, response.finish_reason) == ("Once upon", "length")


def test_refusal_raises_refusal_error(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.reply(CHAT, fx.chat_completion_refusal("I can't help with that."))

    with pytest.raises(llmplex.LLMRefusalError) as caught:
        llm.complete("local:m", "something bad")

    assert caught.value.refusal == "I can't help with that."


def test_keyless_local_server_gets_a_placeholder_key_never_the_openai_key(
    llm: llmplex.Client, local_api: FakeAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-cloud")
    local_api.reply(CHAT, fx.chat_completion())

    llm.complete("local:m", "hi")

    headers = local_api.requests[0].headers
    assert API_KEY not in headers["authorization"]
    assert headers["authorization"] == "Bearer llmplex-no-key"
    assert "openai-organization" not in headers


def test_configured_key_and_organization_are_sent(local_api: FakeAPI) -> None:
    local_api.reply(CHAT, fx.chat_completion())
    llm = llmplex.Client(
        providers={
            "local": {
                "plugin": "openai",
                "base_url": local_api.base_url,
                "api_key": "sk-local",
                "organization": "org-1",
            }
        }
    )

    llm.complete("local:m", "hi")

    headers = local_api.requests[0].headers
    assert headers["authorization"] == "Bearer sk-local"
    assert headers["openai-organization"] == "org-1"


# --- streaming -------------------------------------------------------------------------


def test_stream_text_deltas_then_usage_and_the_assembled_response(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.stream(CHAT, fx.chat_stream_text(["Hel", "lo", "!"], usage=fx.TokenUsage(5, 3)))

    events = list(llm.stream("local:m", "hi"))

    assert [e.text for e in events if e.type == "text"] == ["Hel", "lo", "!"]
    assert [e.finish_reason for e in events if e.type == "finish"] == ["stop"]
    final = events[-1].response
    assert final is not None
    assert (final.text, final.finish_reason, final.response_id) == ("Hello!", "stop", fx.CHAT_ID)
    assert (final.usage.input_tokens, final.usage.output_tokens) == (5, 3)
    body = local_api.bodies[0]
    assert (body["stream"], body["stream_options"]) == (True, {"include_usage": True})


def test_stream_tool_call_pieces_assemble_into_one_call(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.stream(CHAT, fx.chat_stream_tool_call(argument_parts=4))

    events = list(llm.stream("local:m", "Weather?", tools=[WEATHER]))

    pieces = [e for e in events if e.type == "tool_call"]
    assert len(pieces) == 5
    assert (pieces[0].tool_call_index, pieces[0].tool_call_id, pieces[0].tool_name) == (0, fx.CALL_ID, "get_weather")
    assert "".join(p.arguments_delta for p in pieces) == fx.FunctionCall().arguments
    final = events[-1].response
    assert final is not None
    assert final.finish_reason == "tool_calls"
    assert final.tool_calls == (ToolCall(id=fx.CALL_ID, name="get_weather", arguments=fx.FunctionCall().arguments),)


def test_stream_refusal_raises(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.stream(CHAT, fx.chat_stream_refusal(["No, ", "sorry."]))

    with pytest.raises(llmplex.LLMRefusalError) as caught:
        list(llm.stream("local:m", "something bad"))

    assert caught.value.refusal == "No, sorry."


async def test_async_complete_and_stream(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.reply(CHAT, fx.chat_completion("async hi"))
    local_api.stream(CHAT, fx.chat_stream_text(["a", "b"]))

    response = await llm.acomplete("local:m", "hi")
    events = [event async for event in llm.astream("local:m", "hi")]

    assert response.text == "async hi"
    assert [e.text for e in events if e.type == "text"] == ["a", "b"]
    assert events[-1].response is not None
    assert events[-1].response.usage.total_tokens == fx.TokenUsage().total_tokens


def test_previous_response_id_is_refused_on_chat_before_sending(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.reply(CHAT, fx.chat_completion())

    with pytest.raises(llmplex.LLMConfigurationError, match="keeps no stored responses"):
        llm.complete("local:m", "hi", previous_response_id="resp_1")

    assert local_api.requests == []


def test_provider_options_pass_through_to_the_body(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.reply(CHAT, fx.chat_completion())

    llm.complete("local:m", "hi", provider_options={"top_k": 20, "logprobs": True})

    body = local_api.bodies[0]
    assert (body["top_k"], body["logprobs"]) == (20, True)


def test_structured_output_sends_a_strict_json_schema(llm: llmplex.Client, local_api: FakeAPI) -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "country": {"type": "string"}},
        "required": ["name", "country"],
        "additionalProperties": False,
    }
    local_api.reply(CHAT, fx.chat_completion(json.dumps({"name": "Paris", "country": "France"})))

    response = llm.complete(
        "local:m", "Capital of France?", output=llmplex.OutputSchema(name="City", json_schema=schema)
    )

    assert response.output == {"name": "Paris", "country": "France"}
    assert local_api.bodies[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "City", "schema": schema, "strict": True},
    }


def test_truncated_structured_output_is_an_incomplete_error_with_the_partial_text(
    llm: llmplex.Client, local_api: FakeAPI
) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    local_api.reply(CHAT, fx.chat_completion_truncated('{"name": "Par'))

    with pytest.raises(llmplex.LLMIncompleteError) as caught:
        llm.complete("local:m", "Capital?", output=llmplex.OutputSchema(name="City", json_schema=schema))

    assert caught.value.partial_text == '{"name": "Par'
    sent = local_api.bodies[0]["response_format"]["json_schema"]["schema"]
    assert sent["additionalProperties"] is False
    assert sent["required"] == ["name"]
