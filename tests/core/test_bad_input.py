"""Bad input through the public API: a typed LLMConfigurationError whose message names the problem."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import llmplex
from llmplex import LLMConfigurationError
from llmplex.providers.mock import MockBackend

OBJECT = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

CASES: list[tuple[str, dict[str, Any], str]] = [
    ("empty model string", {"model": ""}, r"model must be a non-empty string like 'openai:gpt-4o-mini', got ''"),
    ("blank model string", {"model": "   "}, "model must be a non-empty string"),
    ("model that is not a string", {"model": 42}, "model must be a non-empty string.*got 42"),
    ("prefix without default model", {"model": "good:"}, r"'good:' names only the provider, and 'good' has no default"),
    ("model with no provider", {"model": ":gpt-4o"}, r"model ':gpt-4o' must be 'provider:model' with both parts"),
    ("unknown provider", {"model": "nosuch:model"}, r"unknown provider 'nosuch'; installed providers: .*mock"),
    ("unknown option", {"temprature": 0.2}, r"unknown option 'temprature'; valid options: temperature, max_tokens"),
    ("negative max_tokens", {"max_tokens": -5}, r"max_tokens: Input should be greater than 0 \(found -5\)"),
    ("temperature out of range", {"temperature": 2.5}, r"temperature: Input should be less than or equal to 2"),
    ("temperature of the wrong type", {"temperature": "hot"}, r"temperature: Input should be a valid number"),
    ("top_p out of range", {"top_p": 1.5}, r"top_p: Input should be less than or equal to 1"),
    ("prompt of the wrong type", {"prompt": 3.5}, "prompt must be a string, a Message, or a list of messages"),
    ("empty message list", {"prompt": []}, "no messages to send"),
    ("message with an unknown role", {"prompt": [{"role": "robot", "content": "x"}]}, r"messages\[0\].*role"),
    ("message without a role", {"prompt": [{"content": "x"}]}, r"messages\[0\].*role: Field required"),
    ("message that is a bare string", {"prompt": ["hi", "there"]}, r"messages\[0\] is not a valid message"),
    ("message content of the wrong type", {"prompt": [{"role": "user", "content": 5}]}, r"content: Input should be"),
    (
        "message with a misspelt key",
        {"prompt": [{"role": "user", "text": "x"}]},
        r"messages\[0\] has unknown key 'text'",
    ),
    ("user message without content", {"prompt": [{"role": "user"}]}, r"messages\[0\] \(user\) has no content"),
    ("tool schema with a bad type", {"tools": [{"name": "t", "parameters": {"type": "objekt"}}]}, r"\('t'\) param"),
    (
        "tool schema with a bad property",
        {"tools": [{"name": "t", "parameters": {"type": "object", "properties": {"q": {"type": 5}}}}]},
        r"not a valid JSON Schema at properties/q/type",
    ),
    (
        "tool schema whose required is not a list",
        {"tools": [{"name": "t", "parameters": {"type": "object", "required": "q"}}]},
        r"not a valid JSON Schema at required: 'q' is not of type 'array'",
    ),
    (
        "tool schema that is not an object",
        {"tools": [{"name": "t", "parameters": {"type": "string"}}]},
        r"must describe an object \(type 'object'\), not type 'string'",
    ),
    ("tool parameters that are not a dict", {"tools": [{"name": "t", "parameters": "q"}]}, r"tools\[0\] is not a"),
    ("tool with a bad name", {"tools": [{"name": "two words", "parameters": OBJECT}]}, r"tools\[0\].*name"),
    ("tool_choice naming no tool", {"tools": [{"name": "t"}], "tool_choice": "other"}, "tool_choice 'other'"),
    ("non-positive timeout", {"timeout": 0}, "timeout must be a positive number of seconds"),
    ("timeout that is not a number", {"timeout": "5"}, "timeout must be a positive number of seconds, got '5'"),
    ("timeout that is NaN", {"timeout": float("nan")}, "timeout must be a positive number of seconds, got nan"),
    ("deadline that is not a Deadline", {"deadline": 5.0}, r"deadline must be an llmplex.Deadline.*timeout="),
    ("bad throttle setting", {"throttle": {"max_attempts": 0}}, "throttle max_attempts must be a whole number >= 1"),
    ("bad budget", {"budget": {"max_total_tokens": -1}}, "budget max_total_tokens must be a whole number >= 0"),
    ("fallbacks as a string", {"fallbacks": "mock:b"}, "fallbacks must be a list of model names"),
]


def _call(mode: str, client: llmplex.Client, arguments: dict[str, Any]) -> object:
    arguments = dict(arguments)
    model = arguments.pop("model", "mock:m")
    prompt = arguments.pop("prompt", "hello")
    if mode == "complete":
        return client.complete(model, prompt, **arguments)
    if mode == "acomplete":
        return asyncio.run(client.acomplete(model, prompt, **arguments))
    if mode == "stream":
        return list(client.stream(model, prompt, **arguments))

    async def drain() -> list[llmplex.StreamEvent]:
        return [event async for event in client.astream(model, prompt, **arguments)]

    return asyncio.run(drain())


@pytest.mark.parametrize("mode", ["complete", "acomplete", "stream", "astream"])
@pytest.mark.parametrize(("name", "arguments", "message"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_a_typed_error_naming_the_problem(
    client: llmplex.Client, mock_backend: MockBackend, mode: str, name: str, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(LLMConfigurationError, match=message):
        _call(mode, client, arguments)
    assert mock_backend.calls == [], f"{name}: nothing may be sent"


def test_valid_tools_and_messages_still_pass(client: llmplex.Client, mock_backend: MockBackend) -> None:
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "find q"}]
    client.complete("mock:m", messages, tools=[{"name": "lookup", "parameters": OBJECT}, {"name": "bare"}])
    assert [t["name"] for t in mock_backend.calls[-1]["tools"]] == ["lookup", "bare"]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: llmplex.Client(throttle={"max_attempts": "many"}), r"key 'throttle\.max_attempts'"),
        (lambda: llmplex.Client(timeout=-1), r"key 'timeout': expected a number greater than 0"),
        (lambda: llmplex.Client(fallbacks={"mock:a": ["mock:a"]}), "lists itself as its own fallback"),
        (lambda: llmplex.Client(budget=42), "budget must be an llmplex.Budget"),
        (lambda: llmplex.Deadline.after(-1), "a deadline needs a finite number of seconds >= 0, got -1"),
    ],
)
def test_bad_client_settings_are_typed_errors(make: Callable[[], object], message: str) -> None:
    with pytest.raises(LLMConfigurationError, match=message):
        make()
