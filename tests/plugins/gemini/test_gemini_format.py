"""Request formatting: every payload is checked against the google-genai SDK's own pydantic types."""

from __future__ import annotations

from typing import Any

import pytest
from llmplex_gemini.request import SKIP_SIGNATURE, format_request
from llmplex_gemini.settings import GeminiSettings

from llmplex.errors import LLMConfigurationError
from llmplex.types import LLMConfig, Message, OutputSchema, Request, Tool, ToolCall
from tests.plugins.gemini.wire import MODEL, check_payload

SETTINGS = GeminiSettings()
WEATHER = Tool(
    name="get_weather",
    description="Weather of a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def fmt(*messages: Message, settings: GeminiSettings = SETTINGS, **fields: Any) -> dict[str, Any]:
    payload = format_request(Request(model=fields.pop("model", MODEL), messages=messages, **fields), settings)
    check_payload(payload)
    return payload


def test_system_instruction_and_roles() -> None:
    payload = fmt(Message.system("Be brief."), Message.user("Hi"), Message.assistant("Hello"), Message.user("Bye"))
    assert payload["model"] == MODEL
    assert payload["config"]["system_instruction"] == "Be brief."
    assert payload["contents"] == [
        {"role": "user", "parts": [{"text": "Hi"}]},
        {"role": "model", "parts": [{"text": "Hello"}]},
        {"role": "user", "parts": [{"text": "Bye"}]},
    ]
    assert payload["config"]["automatic_function_calling"] == {"disable": True}


def test_options_use_gemini_names() -> None:
    config = LLMConfig(
        temperature=0.3, top_p=0.8, max_tokens=64, stop=("END",), seed=7, presence_penalty=0.1, frequency_penalty=0.2
    )
    options = fmt(Message.user("Hi"), config=config)["config"]
    assert options["temperature"] == 0.3
    assert options["top_p"] == 0.8
    assert options["max_output_tokens"] == 64
    assert options["stop_sequences"] == ["END"]
    assert options["seed"] == 7
    assert options["presence_penalty"] == 0.1
    assert options["frequency_penalty"] == 0.2


def test_tools_map_one_to_one_to_function_declarations() -> None:
    payload = fmt(Message.user("Weather?"), tools=(WEATHER,))
    assert payload["config"]["tools"] == [
        {
            "function_declarations": [
                {
                    "name": "get_weather",
                    "description": "Weather of a city",
                    "parameters_json_schema": WEATHER.parameters,
                }
            ]
        }
    ]


@pytest.mark.parametrize(
    ("choice", "calling"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        ("get_weather", {"mode": "ANY", "allowed_function_names": ["get_weather"]}),
    ],
)
def test_tool_choice(choice: str, calling: dict[str, Any]) -> None:
    payload = fmt(Message.user("Hi"), tools=(WEATHER,), tool_choice=choice)
    assert payload["config"]["tool_config"] == {"function_calling_config": calling}


def test_tool_choice_naming_an_undeclared_tool_is_a_configuration_error() -> None:
    with pytest.raises(LLMConfigurationError, match="get_time"):
        fmt(Message.user("Hi"), tools=(WEATHER,), tool_choice="get_time")


def test_function_calls_and_responses_keep_the_name_and_share_turns() -> None:
    calls = (
        ToolCall(id="gemini-call-0", name="get_weather", arguments='{"city": "Paris"}'),
        ToolCall(id="gemini-call-1", name="get_weather", arguments='{"city": "Rome"}'),
    )
    payload = fmt(
        Message.user("Weather in Paris and Rome?"),
        Message.assistant(None, calls),
        Message.tool("gemini-call-0", '{"forecast": "sunny"}'),
        Message.tool("gemini-call-1", "rain"),
        tools=(WEATHER,),
    )
    assert payload["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"function_call": {"name": "get_weather", "args": {"city": "Paris"}}},
                {"function_call": {"name": "get_weather", "args": {"city": "Rome"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"function_response": {"name": "get_weather", "response": {"forecast": "sunny"}}},
                {"function_response": {"name": "get_weather", "response": {"output": "rain"}}},
            ],
        },
    ]


def test_calls_and_results_carry_gemini_call_ids_so_two_calls_of_one_function_are_told_apart() -> None:
    calls = (
        ToolCall(id="fc-paris", name="get_weather", arguments='{"city": "Paris"}'),
        ToolCall(id="fc-rome", name="get_weather", arguments='{"city": "Rome"}'),
    )
    payload = fmt(
        Message.user("Weather in Paris and Rome?"),
        Message.assistant(None, calls),
        Message.tool("fc-rome", "rain"),
        Message.tool("fc-paris", "sunny"),
        tools=(WEATHER,),
    )
    sent_calls = [part["function_call"] for part in payload["contents"][1]["parts"]]
    results = [part["function_response"] for part in payload["contents"][2]["parts"]]
    assert [(c["id"], c["args"]["city"]) for c in sent_calls] == [("fc-paris", "Paris"), ("fc-rome", "Rome")]
    assert [(r["id"], r["response"]["output"]) for r in results] == [("fc-rome", "rain"), ("fc-paris", "sunny")]


def test_tool_result_name_falls_back_to_the_message_name() -> None:
    payload = fmt(Message.user("Hi"), Message.tool("unknown-id", "42", name="answer"))
    result = {"name": "answer", "response": {"output": 42}, "id": "unknown-id"}
    assert payload["contents"][0]["parts"][1] == {"function_response": result}


def test_tool_result_without_any_name_is_a_configuration_error() -> None:
    with pytest.raises(LLMConfigurationError, match="function name"):
        fmt(Message.user("Hi"), Message.tool("unknown-id", "42"))


def test_gemini_3_replayed_calls_carry_the_documented_signature_stand_in() -> None:
    calls = (ToolCall(id="a", name="get_weather", arguments="{}"), ToolCall(id="b", name="get_weather", arguments="{}"))
    history = (Message.user("Hi"), Message.assistant(None, calls), Message.tool("a", "x"), Message.tool("b", "y"))
    parts = fmt(*history, model="gemini-3-pro-preview", tools=(WEATHER,))["contents"][1]["parts"]
    assert parts[0]["thought_signature"] == SKIP_SIGNATURE
    assert "thought_signature" not in parts[1]
    older = fmt(*history, model="gemini-2.5-pro", tools=(WEATHER,))["contents"][1]["parts"]
    assert all("thought_signature" not in part for part in older)


def test_structured_output_is_json_mode_with_the_json_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "population": {"type": ["integer", "null"]}},
        "required": ["name", "population"],
    }
    config = fmt(Message.user("Capital?"), output=OutputSchema(name="city", json_schema=schema))["config"]
    assert config["response_mime_type"] == "application/json"
    assert config["response_json_schema"] == schema


def test_model_override_from_settings() -> None:
    assert fmt(Message.user("Hi"), settings=GeminiSettings(model="gemini-2.5-pro"))["model"] == "gemini-2.5-pro"


def test_provider_options_merge_into_the_config() -> None:
    config = fmt(Message.user("Hi"), provider_options={"top_k": 20, "thinking_config": {"thinking_budget": 0}})
    assert config["config"]["top_k"] == 20
    assert config["config"]["thinking_config"] == {"thinking_budget": 0}


def test_unknown_provider_options_fail_the_contract_check() -> None:
    with pytest.raises(ValueError, match="temprature"):
        fmt(Message.user("Hi"), provider_options={"temprature": 1})


@pytest.mark.parametrize(
    ("messages", "match"),
    [
        ((Message.assistant(None),), "neither content nor tool calls"),
        ((Message.assistant(None, (ToolCall(id="a", name="f", arguments="{oops"),)),), "not JSON"),
        ((Message.assistant(None, (ToolCall(id="a", name="f", arguments="[1]"),)),), "JSON object"),
    ],
)
def test_malformed_conversations_are_configuration_errors(messages: tuple[Message, ...], match: str) -> None:
    with pytest.raises(LLMConfigurationError, match=match):
        format_request(Request(model=MODEL, messages=messages), SETTINGS)
