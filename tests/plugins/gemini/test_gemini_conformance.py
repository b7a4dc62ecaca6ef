"""The gemini plugin passes the conformance kit, over the fake httpx2 network under the real google-genai SDK."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx2
import pytest

from llmplex.testing import FakeError, ProviderConformanceTests, Reply
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http
from tests.plugins.gemini import wire

__all__ = ["TestGeminiConformance", "fake_http"]

ERRORS: dict[str, tuple[int, str, str]] = {
    "bad_request": (400, "INVALID_ARGUMENT", ""),
    "authentication": (401, "UNAUTHENTICATED", ""),
    "not_found": (404, "NOT_FOUND", ""),
    "rate_limit": (429, "RESOURCE_EXHAUSTED", ""),
    "quota": (400, "FAILED_PRECONDITION", "Please enable billing on your project. "),
    "server": (500, "INTERNAL", ""),
    "overloaded": (503, "UNAVAILABLE", ""),
}


def _parts(reply: Reply) -> list[dict[str, Any]]:
    parts = [wire.text_part(reply.text)] if reply.text else []
    return parts + [wire.function_call_part(c.name, json.loads(c.arguments)) for c in reply.tool_calls]


class TestGeminiConformance(ProviderConformanceTests):
    prefix = "gemini"
    model = wire.MODEL
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True

    @pytest.fixture
    def transport(self, fake_http: FakeHTTP, monkeypatch: pytest.MonkeyPatch) -> FakeHTTP:
        monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
        monkeypatch.delenv("GEMINI_API_KEY", raising=False)
        return fake_http

    def _usage(self, reply: Reply) -> dict[str, Any]:
        return wire.usage(reply.usage.input_tokens, reply.usage.output_tokens)

    def fake_response(self, transport: FakeHTTP, reply: Reply) -> None:
        body = wire.response(_parts(reply), usage_metadata=self._usage(reply), model=reply.model)
        transport.reply(json_body=body)

    def fake_stream(self, transport: FakeHTTP, reply: Reply) -> None:
        words = reply.text.split(" ") if reply.text else []
        pieces = [wire.text_part(w if i == 0 else " " + w) for i, w in enumerate(words)]
        pieces += [wire.function_call_part(c.name, json.loads(c.arguments)) for c in reply.tool_calls]
        chunks = [wire.response([p], finish_reason=None, model=reply.model) for p in pieces[:-1]]
        chunks.append(wire.response(pieces[-1:], usage_metadata=self._usage(reply), model=reply.model))
        transport.reply_stream(wire.stream_body(chunks))

    def fake_error(self, transport: FakeHTTP, error: FakeError) -> None:
        if error.kind == "connection":
            transport.fail(httpx2.ConnectError("connection refused"))
        elif error.kind == "timeout":
            transport.fail(httpx2.ReadTimeout("read timed out"))
        else:
            code, status, prefix = ERRORS[error.kind]
            headers = {"retry-after": f"{error.retry_after:g}"} if error.retry_after is not None else {}
            transport.reply(code, json_body=wire.error_body(code, status, prefix + error.message), headers=headers)

    def sent_payloads(self, transport: FakeHTTP) -> Sequence[Any]:
        return [sent.json() for sent in transport.sent]
