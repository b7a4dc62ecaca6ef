"""The Responses API through the public API (the default for ``openai:``)."""

from __future__ import annotations

import httpx
import pytest

import llmplex
from llmplex import Message, ToolCall
from tests.contract import fixtures_openai as fx
from tests.plugins.openai.conftest import API_KEY, FakeAPI

RESPONSES = "/responses"
WEATHER = {
    "name": "get_weather",
    "description": "Current weather in a city",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
}
CITY = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "country": {"type": "string"}},
    "required": ["name", "country"],
    "additionalProperties": False,
}


def test_text_answer_with_usage_including_cached_and_reasoning_tokens(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.reply(RESPONSES, fx.response_text("Hi there!", usage=fx.TokenUsage(100, 50, 64, 32)))

    response = llm.complete("openai:gpt-4o-mini", "Say hi", system="Be terse.", temperature=0.3, max_tokens=40)

    assert (response.text, response.finish_reason) == ("Hi there!", "stop")
    assert (response.provider, response.model, response.response_id) == ("openai", fx.MODEL, fx.RESPONSE_ID)
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (100, 50, 150)
    assert (usage.cached_tokens, usage.reasoning_tokens) == (64, 32)
    assert openai_api.bodies == [
        {
            "model": "gpt-4o-mini",
            "input": [
                {"type": "message", "role": "system", "content": "Be terse."},
                {"type": "message", "role": "user", "content": "Say hi"},
            ],
            "temperature": 0.3,
            "max_output_tokens": 40,
        }
    ]
    assert openai_api.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


@pytest.mark.parametrize(
    ("option", "value"), [("seed", 1), ("stop", ["\n"]), ("presence_penalty", 0.5), ("frequency_penalty", 0.5)]
)
def test_options_the_responses_api_lacks_are_refused_before_sending(
    llm: llmplex.Client, openai_api: FakeAPI, option: str, value: object
) -> None:
    openai_api.reply(RESPONSES, fx.response_text())

    with pytest.raises(llmplex.LLMConfigurationError) as caught:
        llm.complete("openai:gpt-4o-mini", "hi", **{option: value})  # type: ignore[arg-type]

    assert option in str(caught.value)
    assert "Responses API" in str(caught.value)
    assert openai_api.requests == []


def test_tools_tool_choice_and_tool_results_become_input_items(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.reply(RESPONSES, fx.response_text("18C and sunny."))
    history = [
        Message.user("Weather in Paris?"),
        Message.assistant(
            "Let me check.", (ToolCall(id="call_1", name="get_weather", arguments='{"location":"Paris"}'),)
        ),
        Message.tool("call_1", "18C, sunny"),
    ]

    llm.complete("openai:gpt-4o-mini", history, tools=[WEATHER], tool_choice="get_weather")

    body = openai_api.bodies[0]
    assert body["input"] == [
        {"type": "message", "role": "user", "content": "Weather in Paris?"},
        {"type": "message", "role": "assistant", "content": "Let me check."},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"location":"Paris"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "18C, sunny"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "parameters": WEATHER["parameters"],
            "strict": False,
            "description": "Current weather in a city",
        }
    ]
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}


def test_openais_own_tools_in_provider_options_are_added_to_the_function_tools(
    llm: llmplex.Client, openai_api: FakeAPI
) -> None:
    openai_api.reply(RESPONSES, fx.response_text("It is sunny, says the web."))
    search = {"type": "web_search", "external_web_access": False}

    answer = llm.complete("openai:gpt-4o-mini", "Weather?", tools=[WEATHER], provider_options={"tools": [search]})

    assert answer.text == "It is sunny, says the web."
    assert [tool.get("name") for tool in openai_api.bodies[0]["tools"]] == ["get_weather", None]
    assert openai_api.bodies[0]["tools"][1] == search
    for hostile in ({"type": "web_search"}, [{"name": "no type"}], ["web_search"]):
        with pytest.raises(llmplex.LLMConfigurationError, match=r"provider_options\["):
            llm.complete("openai:gpt-4o-mini", "Weather?", provider_options={"tools": hostile})
    assert len(openai_api.requests) == 1  # refused before sending


def test_function_calls_in_the_answer(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.reply(RESPONSES, fx.response_function_call(fx.FunctionCall(), fx.FunctionCall("get_time", "{}", "c2")))

    response = llm.complete("openai:gpt-4o-mini", "Weather and time?", tools=[WEATHER], tool_choice="auto")

    assert response.finish_reason == "tool_calls"
    assert response.tool_calls == (
        ToolCall(id=fx.CALL_ID, name="get_weather", arguments=fx.FunctionCall().arguments),
        ToolCall(id="c2", name="get_time", arguments="{}"),
    )
    assert openai_api.bodies[0]["tool_choice"] == "auto"


def test_structured_output_goes_in_text_format(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.reply(RESPONSES, fx.response_text('{"name": "Paris", "country": "France"}'))

    response = llm.complete(
        "openai:gpt-4o-mini", "Capital of France?", output=llmplex.OutputSchema(name="City", json_schema=CITY)
    )

    assert response.output == {"name": "Paris", "country": "France"}
    assert openai_api.bodies[0]["text"] == {
        "format": {"type": "json_schema", "name": "City", "schema": CITY, "strict": True}
    }


def test_incomplete_answer_is_a_length_finish(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.reply(RESPONSES, fx.response_incomplete("Once upon"))

    response = llm.complete("openai:gpt-4o-mini", "Tell a story", max_tokens=2)

    assert (response.text, response.finish_reason) == ("Once upon", "length")


def test_truncated_structured_output_is_an_incomplete_error(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.reply(RESPONSES, fx.response_incomplete('{"name": "Par'))

    with pytest.raises(llmplex.LLMIncompleteError) as caught:
        llm.complete("openai:gpt-4o-mini", "Capital?", output=llmplex.OutputSchema(name="City", json_schema=CITY))

    assert (caught.value.partial_text, caught.value.reason) == ('{"name": "Par', "length")


def test_refusal_raises_refusal_error(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.reply(RESPONSES, fx.response_refusal("Not that."))

    with pytest.raises(llmplex.LLMRefusalError) as caught:
        llm.complete("openai:gpt-4o-mini", "something bad")

    assert caught.value.refusal == "Not that."


def test_failed_response_raises_the_error_it_carries(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.reply(RESPONSES, fx.response_failed("server_error", "The model failed."))

    with pytest.raises(llmplex.LLMServerError, match="The model failed"):
        llm.complete("openai:gpt-4o-mini", "hi")


def test_previous_response_id_continues_a_chain(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.reply(RESPONSES, fx.response(previous_response_id="resp_prev"))

    llm.complete("openai:gpt-4o-mini", "And then?", previous_response_id="resp_prev")

    assert openai_api.bodies[0]["previous_response_id"] == "resp_prev"


def test_deleting_a_stored_response(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.raw("DELETE", "/responses/resp_1", httpx.Response(200))
    openai_api.raw(
        "DELETE",
        "/responses/resp_gone",
        httpx.Response(404, json=fx.error_body("No response", "invalid_request_error")),
    )
    instance = llm.router.instance("openai")

    def delete(response_id: str) -> bool:
        return instance.hooks.delete_response(
            response_id=response_id, settings=instance.settings, client=instance.client(False)
        )  # type: ignore[no-any-return]

    assert delete("resp_1") is True
    assert delete("resp_gone") is False
    assert [r.method for r in openai_api.requests] == ["DELETE", "DELETE"]


def test_missing_api_key_is_a_configuration_error_naming_the_variable(
    llm: llmplex.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    with pytest.raises(llmplex.LLMConfigurationError, match="OPENAI_API_KEY"):
        llm.complete("openai:gpt-4o-mini", "hi")

    assert llm.router.instance("openai").settings.problems()


# --- streaming -------------------------------------------------------------------------


def test_stream_text_then_usage_and_finish(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.stream(RESPONSES, fx.responses_stream_text(["Hel", "lo"], usage=fx.TokenUsage(7, 2, 3, 1)))

    events = list(llm.stream("openai:gpt-4o-mini", "hi"))

    assert [e.text for e in events if e.type == "text"] == ["Hel", "lo"]
    final = events[-1].response
    assert final is not None
    assert (final.text, final.finish_reason, final.response_id) == ("Hello", "stop", fx.RESPONSE_ID)
    assert (final.usage.input_tokens, final.usage.cached_tokens, final.usage.reasoning_tokens) == (7, 3, 1)
    assert openai_api.bodies[0]["stream"] is True
    assert "stream_options" not in openai_api.bodies[0]


def test_stream_function_call_pieces(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.stream(RESPONSES, fx.responses_stream_function_call(argument_parts=3))

    events = list(llm.stream("openai:gpt-4o-mini", "Weather?", tools=[WEATHER]))

    pieces = [e for e in events if e.type == "tool_call"]
    assert (pieces[0].tool_call_id, pieces[0].tool_name) == (fx.CALL_ID, "get_weather")
    assert {p.tool_call_index for p in pieces} == {0}
    final = events[-1].response
    assert final is not None
    assert final.finish_reason == "tool_calls"
    assert final.tool_calls == (ToolCall(id=fx.CALL_ID, name="get_weather", arguments=fx.FunctionCall().arguments),)


async def test_async_stream_and_complete(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.stream(RESPONSES, fx.responses_stream_text(["x", "y"]))
    openai_api.reply(RESPONSES, fx.response_text("done"))

    events = [e async for e in llm.astream("openai:gpt-4o-mini", "hi")]
    response = await llm.acomplete("openai:gpt-4o-mini", "hi")

    assert "".join(e.text for e in events if e.type == "text") == "xy"
    assert response.text == "done"


def test_stream_cut_structured_output_raises_incomplete_with_partial_text(
    llm: llmplex.Client, openai_api: FakeAPI
) -> None:
    openai_api.stream(RESPONSES, fx.responses_stream_incomplete(['{"name": "Par', 'is", "coun']))

    with pytest.raises(llmplex.LLMIncompleteError) as caught:
        list(llm.stream("openai:gpt-4o-mini", "Capital?", output=llmplex.OutputSchema(name="City", json_schema=CITY)))

    assert caught.value.partial_text == '{"name": "Paris", "coun'


def test_stream_refusal_raises(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.stream(RESPONSES, fx.responses_stream_refusal("No."))

    with pytest.raises(llmplex.LLMRefusalError):
        list(llm.stream("openai:gpt-4o-mini", "something bad"))


@pytest.mark.parametrize(
    ("events", "error"),
    [
        (fx.responses_stream_error("rate_limit_exceeded", "Slow down."), llmplex.LLMRateLimitError),
        (fx.responses_stream_error("server_error", "Oops."), llmplex.LLMServerError),
        (fx.responses_stream_failed("invalid_prompt"), llmplex.LLMBadRequestError),
    ],
)
def test_stream_errors_map_to_the_taxonomy(
    llm: llmplex.Client, openai_api: FakeAPI, events: list[dict[str, object]], error: type[Exception]
) -> None:
    openai_api.stream(RESPONSES, events)

    with pytest.raises(error):
        list(llm.stream("openai:gpt-4o-mini", "hi"))
