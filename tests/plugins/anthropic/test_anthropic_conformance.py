"""The anthropic plugin passes the conformance kit, over the fake httpx2 network under the real SDK."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx2
import pytest

from llmplex.testing import FakeError, ProviderConformanceTests, Reply
from tests.plugins.anthropic import wire
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http

__all__ = ["TestAnthropicConformance", "fake_http"]

ERRORS: dict[str, tuple[int, str]] = {
    "bad_request": (400, "invalid_request_error"),
    "authentication": (401, "authentication_error"),
    "not_found": (404, "not_found_error"),
    "rate_limit": (429, "rate_limit_error"),
    "quota": (402, "billing_error"),
    "server": (500, "api_error"),
    "overloaded": (529, "overloaded_error"),
}


def _content(reply: Reply) -> list[dict[str, Any]]:
    blocks = [wire.text_block(reply.text)] if reply.text else []
    return blocks + [wire.tool_use_block(c.name, json.loads(c.arguments), c.id) for c in reply.tool_calls]


class TestAnthropicConformance(ProviderConformanceTests):
    prefix = "anthropic"
    model = wire.MODEL
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    always_sent_options = frozenset({"max_tokens"})

    @pytest.fixture
    def transport(self, fake_http: FakeHTTP) -> FakeHTTP:
        return fake_http

    def fake_response(self, transport: FakeHTTP, reply: Reply) -> None:
        stop = "tool_use" if reply.tool_calls else "end_turn"
        usage = wire.usage(reply.usage.input_tokens, reply.usage.output_tokens)
        body = wire.message(_content(reply), stop_reason=stop, message_usage=usage, model=reply.model)
        transport.reply(json_body=body)

    def fake_stream(self, transport: FakeHTTP, reply: Reply) -> None:
        blocks: list[dict[str, Any]] = []
        if reply.text:
            words = reply.text.split(" ")
            blocks.append({"text": [words[0], *(" " + w for w in words[1:])]})
        for call in reply.tool_calls:
            half = len(call.arguments) // 2
            blocks.append({"tool_use": (call.id, call.name), "json": [call.arguments[:half], call.arguments[half:]]})
        body = wire.stream_body(
            blocks,
            stop_reason="tool_use" if reply.tool_calls else "end_turn",
            start_usage={"input_tokens": reply.usage.input_tokens, "output_tokens": 1},
            output_tokens=reply.usage.output_tokens,
            model=reply.model,
        )
        transport.reply_stream(body)

    def fake_error(self, transport: FakeHTTP, error: FakeError) -> None:
        if error.kind == "connection":
            transport.fail(httpx2.ConnectError("connection refused"))
        elif error.kind == "timeout":
            transport.fail(httpx2.ReadTimeout("read timed out"))
        else:
            status, kind = ERRORS[error.kind]
            headers = {"retry-after": f"{error.retry_after:g}"} if error.retry_after is not None else {}
            transport.reply(status, json_body=wire.error_body(kind, error.message), headers=headers)

    def sent_payloads(self, transport: FakeHTTP) -> Sequence[Any]:
        return [sent.json() for sent in transport.sent]
