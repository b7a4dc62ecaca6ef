"""Request formatting: every payload is checked against the SDK's own MessageCreateParams types."""

from __future__ import annotations

import pytest
from llmplex_anthropic.request import format_request
from llmplex_anthropic.settings import AnthropicSettings

from llmplex.errors import LLMConfigurationError
from llmplex.types import LLMConfig, Message, OutputSchema, Request, Tool, ToolCall
from tests.plugins.anthropic.wire import MODEL, check_create_params

SETTINGS = AnthropicSettings()
WEATHER = Tool(
    name="get_weather",
    description="Weather of a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CITY = OutputSchema(
    name="city",
    json_schema={
        "type": "object",
        "properties": {"name": {"type": "string"}, "country": {"type": "string"}},
        "required": ["name", "country"],
        "additionalProperties": False,
    },
)


def fmt(*messages: Message, settings: AnthropicSettings = SETTINGS, **fields: object) -> dict[str, object]:
    payload = format_request(Request(model=fields.pop("model", MODEL), messages=messages, **fields), settings)
    check_create_params(payload)
    return payload


def test_system_goes_on_top_and_max_tokens_has_a_documented_default() -> None:
    payload = fmt(Message.system("Be brief."), Message.user("Hi"))
    assert payload == {
        "model": MODEL,
        "max_tokens": 4096,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Hi"}],
    }


def test_default_max_tokens_comes_from_settings_and_the_request_wins() -> None:
    settings = AnthropicSettings(default_max_tokens=77)
    assert fmt(Message.user("Hi"), settings=settings)["max_tokens"] == 77
    assert fmt(Message.user("Hi"), settings=settings, config=LLMConfig(max_tokens=5))["max_tokens"] == 5


def test_stop_uses_the_anthropic_name() -> None:
    payload = fmt(Message.user("Hi"), config=LLMConfig(stop=("END",), max_tokens=10))
    assert payload["stop_sequences"] == ["END"]
    assert payload["max_tokens"] == 10


@pytest.mark.parametrize(
    ("option", "value"),
    [("temperature", 0.5), ("top_p", 0.9), ("seed", 7), ("presence_penalty", 0.1), ("frequency_penalty", 0.1)],
)
def test_options_the_messages_api_lacks_fail_before_sending(option: str, value: float) -> None:
    with pytest.raises(LLMConfigurationError, match=f"does not accept {option}"):
        fmt(Message.user("Hi"), config=LLMConfig(**{option: value}))


def test_multi_turn_with_tool_calls_and_consecutive_results_in_one_user_turn() -> None:
    calls = (
        ToolCall(id="toolu_1", name="get_weather", arguments='{"city": "Paris"}'),
        ToolCall(id="toolu_2", name="get_weather", arguments='{"city": "Rome"}'),
    )
    payload = fmt(
        Message.user("Weather in Paris and Rome?"),
        Message.assistant("Checking.", calls),
        Message.tool("toolu_1", "sunny"),
        Message.tool("toolu_2", "rain"),
        Message.user("And tomorrow?"),
        tools=(WEATHER,),
    )
    assert payload["messages"] == [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "rain"},
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ]
    assert payload["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather of a city",
            "input_schema": WEATHER.parameters,
        }
    ]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ("required", {"type": "any"}),
        ("get_weather", {"type": "tool", "name": "get_weather"}),
    ],
)
def test_tool_choice(choice: str, wire: dict[str, str]) -> None:
    assert fmt(Message.user("Hi"), tools=(WEATHER,), tool_choice=choice)["tool_choice"] == wire


def test_tool_choice_naming_an_undeclared_tool_is_a_configuration_error() -> None:
    with pytest.raises(LLMConfigurationError, match="get_time"):
        fmt(Message.user("Hi"), tools=(WEATHER,), tool_choice="get_time")


def test_native_structured_output_on_current_models() -> None:
    payload = fmt(Message.user("Capital of France?"), model="claude-sonnet-4-5", output=CITY)
    assert payload["output_config"] == {"format": {"type": "json_schema", "schema": CITY.json_schema}}
    assert "tools" not in payload


@pytest.mark.parametrize("model", ["claude-3-5-haiku-20241022", "claude-opus-4-1", "claude-sonnet-4-20250514"])
def test_structured_output_is_a_forced_tool_on_older_models(model: str) -> None:
    payload = fmt(Message.user("Capital of France?"), model=model, output=CITY)
    assert "output_config" not in payload
    assert payload["tool_choice"] == {"type": "tool", "name": "city"}
    assert payload["tools"][0]["name"] == "city"
    assert payload["tools"][0]["input_schema"] == CITY.json_schema


def test_forced_output_tool_alongside_user_tools_lets_the_model_pick() -> None:
    settings = AnthropicSettings(structured_output="tool")
    payload = fmt(Message.user("Hi"), tools=(WEATHER,), output=CITY, settings=settings)
    assert [t["name"] for t in payload["tools"]] == ["get_weather", "city"]
    assert payload["tool_choice"] == {"type": "any"}


def test_output_name_clashing_with_a_tool_is_rejected() -> None:
    clash = OutputSchema(name="get_weather", json_schema={"type": "object"})
    with pytest.raises(LLMConfigurationError, match="rename"):
        fmt(Message.user("Hi"), tools=(WEATHER,), output=clash, settings=AnthropicSettings(structured_output="tool"))


def test_provider_options_pass_through() -> None:
    payload = fmt(Message.user("Hi"), provider_options={"metadata": {"user_id": "u-1"}, "service_tier": "auto"})
    assert payload["metadata"] == {"user_id": "u-1"}
    assert payload["service_tier"] == "auto"


@pytest.mark.parametrize(
    ("messages", "match"),
    [
        ((Message(role="tool", content="x"),), "tool_call_id"),
        ((Message.assistant(None),), "neither content nor tool calls"),
        ((Message.assistant(None, (ToolCall(id="a", name="f", arguments="{oops"),)),), "not JSON"),
        ((Message.assistant(None, (ToolCall(id="a", name="f", arguments="[1]"),)),), "JSON object"),
    ],
)
def test_malformed_conversations_are_configuration_errors(messages: tuple[Message, ...], match: str) -> None:
    with pytest.raises(LLMConfigurationError, match=match):
        format_request(Request(model=MODEL, messages=messages), SETTINGS)


def test_the_contract_check_catches_keys_the_sdk_does_not_know() -> None:
    with pytest.raises(AssertionError, match="do not know"):
        check_create_params({"model": MODEL, "max_tokens": 5, "messages": [], "temprature": 1})
