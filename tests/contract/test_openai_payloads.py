"""Every body the openai plugin sends validates against the official OpenAI OpenAPI spec.

Requests go through the public API and the real SDK; respx captures the bytes on
the wire. Chat Completions bodies are checked against ``CreateChatCompletionRequest``,
Responses API bodies against ``CreateResponse``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

import llmplex
from llmplex import Message, ToolCall
from tests.contract import fixtures_openai as fx
from tests.contract.openapi import validate_openai

LOCAL_URL = "http://127.0.0.1:8932/v1"
OPENAI_URL = "https://api.openai.com/v1"
CITY = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "country": {"type": ["string", "null"]}},
    "required": ["name", "country"],
    "additionalProperties": False,
}
WEATHER = {
    "name": "get_weather",
    "description": "Current weather",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
}
TURNS = [
    Message.system("Be terse."),
    Message.user("Weather in Paris?"),
    Message.assistant("Checking.", (ToolCall(id="call_1", name="get_weather", arguments='{"location":"Paris"}'),)),
    Message.tool("call_1", "18C, sunny"),
    Message.assistant(None, (ToolCall(id="call_2", name="get_weather", arguments='{"location":"Lyon"}'),)),
    Message.tool("call_2", "20C"),
    Message.user("And tomorrow?"),
]

CASES: dict[str, dict[str, Any]] = {
    "text": {"prompt": "hi"},
    "system": {"prompt": "hi", "system": "Be terse."},
    "multi-turn-tool-results": {"prompt": TURNS, "tools": [WEATHER]},
    "tools-auto": {"prompt": "Weather?", "tools": [WEATHER], "tool_choice": "auto"},
    "tools-required": {"prompt": "Weather?", "tools": [WEATHER], "tool_choice": "required"},
    "tools-none": {"prompt": "Weather?", "tools": [WEATHER], "tool_choice": "none"},
    "tools-named": {"prompt": "Weather?", "tools": [WEATHER], "tool_choice": "get_weather"},
    "output": {"prompt": "Capital?", "output": llmplex.OutputSchema(name="City", json_schema=CITY)},
    "output-non-strict": {
        "prompt": "Capital?",
        "output": llmplex.OutputSchema(name="City", json_schema={"type": "object"}, strict=False),
    },
    "options": {"prompt": "hi", "temperature": 0.5, "top_p": 0.9, "max_tokens": 64},
    "tools-output-options": {
        "prompt": "Weather?",
        "tools": [WEATHER],
        "output": llmplex.OutputSchema(name="City", json_schema=CITY),
        "temperature": 0.0,
    },
}
CHAT_ONLY_OPTIONS = {"stop": ["\n\n"], "seed": 7, "presence_penalty": 0.1, "frequency_penalty": -0.1}


@pytest.fixture
def wire() -> Iterator[respx.MockRouter]:
    """Both endpoints answer with valid fixtures (JSON or SSE by the request's ``stream``)."""
    with respx.mock(assert_all_called=False) as router:
        router.post(f"{LOCAL_URL}/chat/completions").mock(side_effect=_chat_reply)
        router.post(f"{OPENAI_URL}/responses").mock(side_effect=_responses_reply)
        yield router


def _sse(items: list[dict[str, Any]], named: bool) -> httpx.Response:
    frames = [(f"event: {i['type']}\n" if named else "") + f"data: {json.dumps(i)}\n\n" for i in items]
    tail = [] if named else ["data: [DONE]\n\n"]
    return httpx.Response(200, content="".join(frames + tail).encode(), headers={"content-type": "text/event-stream"})


def _chat_reply(request: httpx.Request) -> httpx.Response:
    if json.loads(request.content).get("stream"):
        return _sse(fx.chat_stream_text(), named=False)
    return httpx.Response(200, json=fx.chat_completion('{"name": "Paris", "country": "France"}'))


def _responses_reply(request: httpx.Request) -> httpx.Response:
    if json.loads(request.content).get("stream"):
        return _sse(fx.responses_stream_text(), named=True)
    return httpx.Response(200, json=fx.response_text('{"name": "Paris", "country": "France"}'))


def _sent(router: respx.MockRouter) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(router.calls.last.request.content)
    return body


@pytest.fixture(scope="module")
def llm() -> llmplex.Client:
    """One client for the module (building SDK clients costs more than a request)."""
    return llmplex.Client(
        providers={
            "openai": {"api_key": "sk-contract-test"},
            "local": {"plugin": "openai", "base_url": LOCAL_URL, "api": "chat"},
        },
        throttle={"max_attempts": 1},
    )


def _run(llm: llmplex.Client, model: str, case: dict[str, Any], stream: bool) -> None:
    args = {k: v for k, v in case.items() if k != "prompt"}
    if stream:
        args.pop("output", None)
        list(llm.stream(model, case["prompt"], **args))
    else:
        llm.complete(model, case["prompt"], **args)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_chat_payload_matches_create_chat_completion_request(
    llm: llmplex.Client, wire: respx.MockRouter, case: str, stream: bool
) -> None:
    _run(llm, "local:gpt-4o-mini", CASES[case], stream)

    body = _sent(wire)
    validate_openai("CreateChatCompletionRequest", body)
    assert body.get("stream", False) is stream


def test_chat_payload_with_every_chat_option(llm: llmplex.Client, wire: respx.MockRouter) -> None:
    _run(llm, "local:gpt-4o-mini", {"prompt": "hi", **CHAT_ONLY_OPTIONS, "max_tokens": 10}, True)

    body = _sent(wire)
    validate_openai("CreateChatCompletionRequest", body)
    assert body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_responses_payload_matches_create_response(
    llm: llmplex.Client, wire: respx.MockRouter, case: str, stream: bool
) -> None:
    _run(llm, "openai:gpt-4o-mini", CASES[case], stream)

    body = _sent(wire)
    validate_openai("CreateResponse", body)
    assert body.get("stream", False) is stream


def test_responses_payload_with_previous_response_id(llm: llmplex.Client, wire: respx.MockRouter) -> None:
    _run(llm, "openai:gpt-4o-mini", {"prompt": "And then?", "previous_response_id": fx.RESPONSE_ID}, False)

    validate_openai("CreateResponse", _sent(wire))
