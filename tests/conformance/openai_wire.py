"""The OpenAI wire for the conformance kit, shared by the plugins that speak it (openai, llamacpp, litellm).

Every answer is built by ``tests.contract.fixtures_openai`` and validated against
OpenAI's OpenAPI spec. :class:`OpenAIWireConformance` fakes the endpoint with
``respx`` under the OpenAI SDK and speaks Chat Completions unless a subclass
overrides ``path`` and the ``fake_*`` methods.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import httpx
import pytest
import respx

from llmplex.testing import FakeError, ProviderConformanceTests, Reply
from llmplex.testing.http import HTTPFake, sse_response
from tests.contract import fixtures_openai as wire
from tests.contract.openapi import validate_openai

ERRORS: Mapping[str, tuple[int, str, str | None]] = {
    "bad_request": (400, "invalid_request_error", None),
    "authentication": (401, "invalid_request_error", "invalid_api_key"),
    "not_found": (404, "invalid_request_error", "model_not_found"),
    "rate_limit": (429, "tokens", "rate_limit_exceeded"),
    "quota": (429, "insufficient_quota", "insufficient_quota"),
    "server": (500, "server_error", None),
    "overloaded": (503, "server_error", None),
}
"""Error kind → the status, error type and error code OpenAI answers with."""


def usage_of(reply: Reply) -> wire.TokenUsage:
    """The reply's token counts for the builders."""
    return wire.TokenUsage(input_tokens=reply.usage.input_tokens, output_tokens=reply.usage.output_tokens)


def calls_of(reply: Reply) -> list[wire.FunctionCall]:
    """The reply's tool calls for the builders."""
    return [wire.FunctionCall(name=c.name, arguments=c.arguments, call_id=c.id) for c in reply.tool_calls]


def words_of(text: str) -> list[str]:
    """Stream deltas: each word after the first keeps its leading space."""
    words = text.split(" ")
    return [words[0], *(" " + w for w in words[1:])]


def validated(schema: str, payloads: list[wire.Json]) -> list[wire.Json]:
    """``payloads``, each checked against OpenAPI ``schema``."""
    for payload in payloads:
        validate_openai(schema, payload)
    return payloads


def error_answer(error: FakeError) -> tuple[int, wire.Json, dict[str, str]]:
    """The status, validated ``ErrorResponse`` body and headers (``Retry-After``) of an HTTP error kind."""
    status, kind, code = ERRORS[error.kind]
    body = wire.error_body(error.message, kind, code=code)
    validate_openai("ErrorResponse", body)
    headers = {"retry-after": f"{error.retry_after:g}"} if error.retry_after is not None else {}
    return status, body, headers


class OpenAIWireConformance(ProviderConformanceTests):
    """Fakes ``base_url`` + ``path`` with respx; answers are Chat Completions unless overridden."""

    base_url: ClassVar[str] = "https://api.openai.com/v1"
    path: ClassVar[str] = "/chat/completions"

    @pytest.fixture
    def transport(self) -> Iterator[HTTPFake]:
        with respx.mock(base_url=self.base_url, assert_all_called=False) as router:
            yield HTTPFake(router.post(self.path))

    def push_json(self, transport: HTTPFake, schema: str, body: wire.Json) -> None:
        """Queue ``body`` as a 200 answer once it validates as OpenAPI ``schema``."""
        validate_openai(schema, body)
        transport.push(httpx.Response(200, json=body))

    def fake_response(self, transport: HTTPFake, reply: Reply) -> None:
        calls = calls_of(reply)
        body = wire.chat_completion(
            reply.text or None,
            finish_reason="tool_calls" if calls else "stop",
            tool_calls=calls or None,
            usage=usage_of(reply),
            model=reply.model,
        )
        self.push_json(transport, "CreateChatCompletionResponse", body)

    def fake_stream(self, transport: HTTPFake, reply: Reply) -> None:
        if reply.tool_calls:
            (call,) = calls_of(reply)
            chunks = wire.chat_stream_tool_call(call, usage=usage_of(reply))
        else:
            chunks = wire.chat_stream_text(words_of(reply.text), usage=usage_of(reply))
        transport.push(sse_response([*validated("CreateChatCompletionStreamResponse", chunks), "[DONE]"]))

    def fake_error(self, transport: HTTPFake, error: FakeError) -> None:
        if error.kind == "connection":
            transport.push(httpx.ConnectError("connection refused"))
        elif error.kind == "timeout":
            transport.push(httpx.ReadTimeout("read timed out"))
        else:
            status, body, headers = error_answer(error)
            transport.push(httpx.Response(status, json=body, headers=headers))

    def sent_payloads(self, transport: HTTPFake) -> Sequence[Any]:
        return transport.bodies
