"""Issue 26 item 7: the kit ships the OpenAI-compatible wire adapter as ``llmplex.testing.OpenAIChatWire``."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk

import llmplex.testing
from llmplex.testing import ERROR_KINDS, FakeError, OpenAIChatWire, Reply
from llmplex.testing.server import Received
from llmplex.types import ToolCall, Usage
from tests.conformance import openai_wire
from tests.contract.openapi import validate_openai

REPLY = Reply(
    text="Paris is lovely",
    tool_calls=(ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}'),),
    usage=Usage(input_tokens=13, output_tokens=29, cached_tokens=5, reasoning_tokens=3),
    model="gpt-4o-mini",
    response_id="chatcmpl-kit",
)


class _Validating(OpenAIChatWire):
    def __init__(self) -> None:
        self.checked: list[str] = []

    def check(self, schema: str, body: dict[str, Any]) -> None:
        validate_openai(schema, body)
        self.checked.append(schema)


def test_item_7_openai_chat_wire_is_exported_from_the_kit_and_the_repository_tests_build_on_it() -> None:
    assert "OpenAIChatWire" in llmplex.testing.__all__
    assert llmplex.testing.OpenAIChatWire is OpenAIChatWire
    assert issubclass(openai_wire.ChatWire, OpenAIChatWire)
    assert openai_wire.read_chat_request is llmplex.testing.openai_chat.read_chat_request


def test_item_7_every_rendered_body_matches_openais_openapi_spec_and_the_sdks_models() -> None:
    wire = _Validating()
    body = wire.response(REPLY)
    chunks = wire.chunks(REPLY)
    errors = [wire.error_body(FakeError(kind, "no")) for kind in ERROR_KINDS if kind not in ("connection", "timeout")]
    assert wire.checked.count("CreateChatCompletionResponse") == 1
    assert wire.checked.count("CreateChatCompletionStreamResponse") == len(chunks)
    assert wire.checked.count("ErrorResponse") == len(errors)
    parsed = ChatCompletion.model_validate(body)
    assert parsed.choices[0].message.tool_calls[0].function.arguments == '{"city": "Paris"}'  # type: ignore[index,union-attr]
    assert parsed.usage is not None and parsed.usage.prompt_tokens_details.cached_tokens == 5  # type: ignore[union-attr]
    streamed = [ChatCompletionChunk.model_validate(c) for c in chunks]
    assert "".join(c.choices[0].delta.content or "" for c in streamed if c.choices) == "Paris is lovely"
    assert streamed[-1].usage is not None and streamed[-1].usage.completion_tokens == 29
    frames = wire.stream(REPLY)
    assert frames[-1] == b"data: [DONE]\n\n" and all(f.startswith(b"data: ") for f in frames)


def test_item_7_read_chat_request_reads_what_the_openai_sdk_sends() -> None:
    sent: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.content)
        return httpx.Response(200, json=OpenAIChatWire().response(Reply(text="hi", model="m")))

    transport = httpx.MockTransport(handler)
    client = openai.OpenAI(api_key="k", base_url="http://127.0.0.1:9/v1", http_client=httpx.Client(transport=transport))
    client.chat.completions.create(
        model="m",
        messages=[
            {"role": "developer", "content": "be brief"},
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"a": 1}'}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        ],
        max_completion_tokens=5,
        stop="END",
        tool_choice="auto",
    )
    read = OpenAIChatWire().read_request(Received("POST", "/v1/chat/completions", {}, {}, sent[0]))
    assert read.system == ("be brief",)
    assert [m.role for m in read.messages] == ["user", "assistant", "tool"]
    assert read.messages[1].tool_calls[0].arguments == {"a": 1} and read.messages[2].tool_call_id == "c1"
    assert read.options == {"max_tokens": 5, "stop": ["END"]} and read.tool_choice == "auto"
    assert json.loads(sent[0])["model"] == read.model == "m"


def test_item_7_an_unknown_error_kind_is_a_server_error_not_a_crash() -> None:
    body = OpenAIChatWire().error_body(FakeError("bad_gateway", "upstream"))
    assert body["error"]["type"] == "server_error" and body["error"]["message"] == "upstream"


@pytest.mark.parametrize("text", ["", "one"])
def test_item_7_empty_and_single_word_answers_stream_as_the_sdk_reads_them(text: str) -> None:
    chunks = OpenAIChatWire().chunks(Reply(text=text, model="m"))
    joined = "".join(ChatCompletionChunk.model_validate(c).choices[0].delta.content or "" for c in chunks[:-1])
    assert joined == text
