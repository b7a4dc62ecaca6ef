"""The Anthropic plugin end to end against llama.cpp's ``/v1/messages`` (the real local model).

The provider is a config instance of the ``anthropic`` plugin pointed at the
local server, without a key. The model is the small 270M *base* model: these tests
assert wire shapes and types, not what it says.
"""

from __future__ import annotations

import json

import pytest
from llmplex_llamacpp.catalogue import DEFAULT_MODEL
from llmplex_llamacpp.model_files import SMALL_MODEL  # tests/live/conftest.py says how to install it if missing
from llmplex_llamacpp.server import LocalServer

import llmplex
from llmplex.types import Message, Tool

PREFIX = "local-anthropic"
MODEL = f"{PREFIX}:{SMALL_MODEL}"
DETERMINISTIC = {"extra_body": {"temperature": 0, "seed": 1}}
"""llama.cpp still samples; the 2026-10-21 Messages API has no temperature, so it goes in the raw body."""

ADD = Tool(
    name="add",
    description="Add two integers",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


def _anthropic_on(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    """``local-anthropic:`` = the anthropic plugin on ``server``; a cloud key must not reach it."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-not-be-sent-000000")
    return llmplex.Client(
        providers={PREFIX: {"plugin": "anthropic", "base_url": server.base_url}},
        throttle={"max_attempts": 2, "base_delay": 0.05},
    )


@pytest.fixture
def local(small_server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    """On the small base model's server."""
    return _anthropic_on(small_server, monkeypatch)


def test_text_answer_and_max_tokens_truncation(local: llmplex.Client) -> None:
    response = local.complete(MODEL, "The capital of France is", max_tokens=8, provider_options=DETERMINISTIC)
    assert isinstance(response.text, str)
    assert response.text
    assert response.finish_reason == "length"
    assert 0 < response.usage.output_tokens <= 8
    assert response.usage.input_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    assert response.provider == PREFIX
    assert response.response_id
    assert response.model


async def test_async_answer(local: llmplex.Client) -> None:
    response = await local.acomplete(
        MODEL, "Hello", system="You are terse.", max_tokens=4, provider_options=DETERMINISTIC
    )
    assert response.finish_reason in {"length", "stop"}
    assert 0 < response.usage.output_tokens <= 4


def test_stream_events_assemble_into_the_response(local: llmplex.Client) -> None:
    events = list(local.stream(MODEL, "Once upon a time", max_tokens=8, provider_options=DETERMINISTIC))
    kinds = [e.type for e in events]
    assert kinds[-3:] == ["usage", "finish", "response"]
    assert set(kinds[:-3]) <= {"text"}
    final = events[-1].response
    assert final is not None
    assert final.text == "".join(e.text for e in events if e.type == "text")
    assert final.finish_reason == "length"
    assert 0 < final.usage.output_tokens <= 8
    assert final.usage.input_tokens > 0


@pytest.fixture
def instruct(local_server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    """On the server of the default (instruct) model."""
    return _anthropic_on(local_server, monkeypatch)


def test_tool_round_trip(instruct: llmplex.Client) -> None:
    """On the instruct model: llama.cpp holds its answer to a call of the tool named in ``tool_choice`` (the same
    call in five rounds, with other requests between them, even for a prompt unrelated to the tool). The 270M base
    model's chat format is not held to it: it answered text in two CI runs."""
    prompt = "Use the add tool on 7 and 5."
    model = f"{PREFIX}:{DEFAULT_MODEL}"
    first = instruct.complete(
        model, prompt, tools=[ADD], tool_choice="add", max_tokens=60, provider_options=DETERMINISTIC
    )
    assert first.tool_calls, f"the model made no tool call; it said {first.text!r}"
    call = first.tool_calls[0]
    assert call.name == "add"
    assert call.id
    arguments = json.loads(call.arguments)
    assert isinstance(arguments["a"], int)
    assert isinstance(arguments["b"], int)

    history = [Message.user(prompt), first.message(), *(Message.tool(c.id, "12") for c in first.tool_calls)]
    second = instruct.complete(model, history, tools=[ADD], max_tokens=12, provider_options=DETERMINISTIC)
    assert second.finish_reason in {"stop", "length", "tool_calls"}
    assert isinstance(second.text, str)
    assert second.usage.input_tokens > first.usage.input_tokens
