"""Issue 34 item 3: an async Anthropic answer costs less CPU around the POST.

``Response.of`` builds a plugin's answer without pydantic's validation when every value already has its field's
type (equal to the validated one in every way; anything else is validated as before); ``parse_message`` reads the
lean path's decoded JSON in place and builds its answer with it; the lean sender works out a call's headers and
the SDK's timeout once per model and ``max_tokens`` instead of on every call (the SDK builds a ``Timeout`` each
time).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import pytest
from anthropic.types import Message as SDKMessage
from llmplex_anthropic.response import parse_message
from llmplex_anthropic.settings import AnthropicSettings
from pydantic import ValidationError

import llmplex
from llmplex.types import LLMConfig, Message, ReasoningPart, Request, Response, Tool, ToolCall, Usage
from llmplex.types.request import plain_request
from tests.plugins.anthropic.wire import MODEL, message, text_block, tool_use_block, usage
from tests.support.stream_server import Reply, StreamServer

_SETTINGS = AnthropicSettings(api_key="k")
_USAGE = Usage.of({"input_tokens": 9, "output_tokens": 7})
_PART = ReasoningPart(format="anthropic", text="hmm", data={"type": "thinking", "thinking": "hmm"})
_VALUES: dict[str, dict[str, Any]] = {
    "plain": {
        "text": "Hello",
        "tool_calls": (),
        "finish_reason": "stop",
        "usage": _USAGE,
        "model": "m",
        "response_id": "r1",
        "refusal": None,
        "reasoning": (),
        "raw": {"id": "r1"},
    },
    "tools, reasoning, refusal": {
        "text": "",
        "tool_calls": (ToolCall(id="c1", name="f", arguments="{}"),),
        "finish_reason": "refusal",
        "usage": Usage.unreported(),
        "model": "m",
        "response_id": None,
        "refusal": "no",
        "reasoning": (_PART,),
        "raw": None,
    },
}
_VALIDATED: dict[str, dict[str, Any]] = {
    "a list of tool calls": {"tool_calls": [ToolCall(id="c1", name="f")]},
    "a usage with its total to fill in": {"usage": Usage.model_construct(input_tokens=3, output_tokens=4)},
    "a tool call as a dict": {"tool_calls": ({"id": "c1", "name": "f"},)},
}
_REFUSED: dict[str, dict[str, Any]] = {
    "no text": {"text": None},
    "an unknown finish reason": {"finish_reason": "bored"},
    "no model": {"model": None},
    "a number as the id": {"response_id": 7},
}


def _same(built: Response, validated: Response) -> None:
    assert built == validated
    assert list(built.__dict__.items()) == list(validated.__dict__.items())
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump() == validated.model_dump()
    assert (built.__pydantic_private__, built.__pydantic_extra__) == (None, None)


@pytest.mark.parametrize("name", list(_VALUES))
def test_item_3_core_response_of_equals_the_validated_answer_unvalidated(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    validated = Response(**_VALUES[name])

    def validating(self: Response, **data: Any) -> None:
        raise AssertionError("validated")

    monkeypatch.setattr(Response, "__init__", validating)
    _same(Response.of(**_VALUES[name]), validated)


@pytest.mark.parametrize("name", list(_VALIDATED))
def test_item_3_core_response_of_validates_what_it_cannot_vouch_for(name: str) -> None:
    values = {**_VALUES["plain"], **_VALIDATED[name]}
    _same(Response.of(**values), Response(**values))


@pytest.mark.parametrize("name", list(_REFUSED))
def test_item_3_core_response_of_refuses_what_validation_refuses(name: str) -> None:
    values = {**_VALUES["plain"], **_REFUSED[name]}
    with pytest.raises(ValidationError) as expected:
        Response(**values)
    with pytest.raises(ValidationError) as got:
        Response.of(**values)
    assert got.value.errors(include_url=False) == expected.value.errors(include_url=False)


_USAGES: dict[str, dict[str, Any] | None] = {
    "the API's": usage(12, 6, cache_read=3, cache_creation=5),
    "by lifetime only": {
        "input_tokens": 4,
        "output_tokens": 2,
        "cache_creation": {"ephemeral_5m_input_tokens": 2, "ephemeral_1h_input_tokens": 7},
    },
    "no cache object": {"input_tokens": 4, "output_tokens": 2, "cache_read_input_tokens": None},
    "thinking counted": {"input_tokens": 4, "output_tokens": 9, "output_tokens_details": {"thinking_tokens": 5}},
    "counts only": {"input_tokens": 0, "output_tokens": 0},
}
_CONTENT = {
    "text": [text_block("Hello"), text_block(" there")],
    "a tool call": [text_block("Let me look."), tool_use_block("lookup", {"q": "x"})],
    "thinking": [{"type": "thinking", "thinking": "hmm", "signature": "sig"}, text_block("Done.")],
}


def _request() -> Request:
    return plain_request(MODEL, "hi", False)


@pytest.mark.parametrize("used", list(_USAGES))
@pytest.mark.parametrize("content", list(_CONTENT))
def test_item_3_core_anthropic_json_answer_equals_the_sdk_models(used: str, content: str) -> None:
    body = message(_CONTENT[content], message_usage=_USAGES[used])
    body["usage"] = _USAGES[used]  # as given: message() fills in no field
    from_json = parse_message(json.loads(json.dumps(body)), _request())
    from_model = parse_message(SDKMessage.model_validate(body), _request())
    assert from_json.model_dump(exclude={"raw"}) == from_model.model_dump(exclude={"raw"})
    assert from_json.usage.model_fields_set == from_model.usage.model_fields_set
    assert from_json.model_fields_set == from_model.model_fields_set


def test_item_3_core_anthropic_json_answer_is_not_validated_again(monkeypatch: pytest.MonkeyPatch) -> None:
    body = json.loads(json.dumps(message([text_block("Hello")])))
    expected = parse_message(body, _request())

    def validating(self: Response, **data: Any) -> None:
        raise AssertionError("validated")

    monkeypatch.setattr(Response, "__init__", validating)
    _same(parse_message(body, _request()), expected)


def test_item_3_core_anthropic_sdk_timeout_worked_out_once_per_model_and_max_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two calls of one model and ``max_tokens`` ask the SDK for its timeout once and send the same headers as
    the first; another ``max_tokens`` asks again; a call given a timeout sends its own."""
    asked: list[int] = []
    calculate = anthropic.AsyncAnthropic._calculate_nonstreaming_timeout

    def spy(self: anthropic.AsyncAnthropic, max_tokens: int, limit: int | None) -> Any:
        asked.append(max_tokens)
        return calculate(self, max_tokens, limit)

    monkeypatch.setattr(anthropic.AsyncAnthropic, "_calculate_nonstreaming_timeout", spy)
    body = json.dumps(message([text_block("Hello")])).encode()
    with StreamServer() as server:
        server.script(*[Reply.json(200, body)] * 4)
        llm = llmplex.Client(providers={"p": {"plugin": "anthropic", "base_url": server.url, "api_key": "k"}})

        async def calls() -> None:
            try:
                await llm.acomplete(f"p:{MODEL}", "hi", max_tokens=100)
                await llm.acomplete(f"p:{MODEL}", "hi", max_tokens=100)
                await llm.acomplete(f"p:{MODEL}", "hi", max_tokens=200)
                await llm.acomplete(f"p:{MODEL}", "hi", max_tokens=100, timeout=30)
            finally:
                await llm.aclose()

        asyncio.run(calls())
        first, second, third, timed = (dict(request.headers) for request in server.requests)
    assert asked == [100, 200]
    assert first == second
    assert first["x-stainless-read-timeout"] == third["x-stainless-read-timeout"] == "600"
    assert 0 < float(timed["x-stainless-read-timeout"]) <= 30


_PROMPTS: dict[str, Request] = {
    "a prompt": plain_request(MODEL, "Say hello in one short sentence.", False),
    "an empty prompt": plain_request(MODEL, "", False),
    "a streamed prompt": plain_request(MODEL, "héllo ✓", True),
}
_NOT_ONE_PROMPT: dict[str, dict[str, Any]] = {
    "a system prompt": {"messages": (Message.system("Be brief."), Message.user("hi"))},
    "a marked message": {"messages": (Message.user("hi", cache=True),)},
    "an assistant turn": {"messages": (Message.user("hi"), Message.assistant("Hello"), Message.user("more"))},
    "the prompt cache": {"prompt_cache": "auto"},
    "an option": {"config": LLMConfig(max_tokens=50)},
    "a stop": {"config": LLMConfig(stop=["x"])},
    "provider options": {"provider_options": {"metadata": {"user_id": "u"}}},
    "tools": {"tools": (Tool(name="f", parameters={"type": "object", "properties": {}}),), "tool_choice": "auto"},
}


@pytest.mark.parametrize("name", list(_PROMPTS))
def test_item_3_core_anthropic_one_prompt_formatted_at_once(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A single text prompt's payload is the one the whole conversation walk builds, without that walk."""
    from llmplex_anthropic import request as formatting

    expected = _walked(formatting, _PROMPTS[name], monkeypatch)

    def walking(messages: Any) -> Any:
        raise AssertionError("the conversation was walked")

    monkeypatch.setattr(formatting, "_conversation", walking)
    assert formatting.format_request(_PROMPTS[name], _SETTINGS) == expected
    assert list(expected) == ["model", "messages", "max_tokens"]


@pytest.mark.parametrize("name", list(_NOT_ONE_PROMPT))
def test_item_3_core_anthropic_other_requests_walk_the_conversation(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from llmplex_anthropic import request as formatting

    request = Request(model=MODEL, **{"messages": (Message.user("hi"),), **_NOT_ONE_PROMPT[name]})
    assert formatting.format_request(request, _SETTINGS) == _walked(formatting, request, monkeypatch)


def _walked(formatting: Any, request: Request, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The payload built the long way (no request taken as a single prompt)."""
    with monkeypatch.context() as patch:
        patch.setattr(formatting, "_one_prompt", lambda request: None)
        payload: dict[str, Any] = formatting.format_request(request, _SETTINGS)
    return payload


@pytest.mark.parametrize(
    ("given", "configured", "chosen"),
    [(None, None, None), (None, 30.0, 30.0), (12.5, None, 12.5), (12.5, 30.0, 12.5), (45.0, 30.0, 30.0)],
)
def test_item_3_core_anthropic_call_timeout_is_the_smaller_given(
    given: float | None, configured: float | None, chosen: float | None
) -> None:
    from llmplex_anthropic.hooks import _chosen

    assert _chosen(given, AnthropicSettings(api_key="k", timeout=configured)) == chosen


def test_item_3_core_anthropic_body_order_worked_out_once_per_key_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """The body's keys are put in the SDK's order once for each set of keys a payload has, in any order given."""
    from llmplex_anthropic import lean
    from llmplex_anthropic.clients import create_async_client

    monkeypatch.setattr(lean, "_ORDERS", {})
    client = create_async_client(_SETTINGS)
    given = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 10}
    first = lean.sender(client, given, None)
    again = lean.sender(client, dict(reversed(given.items())), None)
    assert first is not None and again is not None
    assert (
        first[1]
        == again[1]
        == b'{"max_tokens":10,"messages":[{"role":"user","content":"hi"}],"model":"' + (MODEL.encode() + b'"}')
    )
    assert sorted(lean._ORDERS.values()) == [("max_tokens", "messages", "model")] * 2
