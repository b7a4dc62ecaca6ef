"""The llamacpp plugin passes the conformance kit, its local server replaced by respx under the OpenAI SDK."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import respx
from llmplex_llamacpp.local_clients import LocalClients

from llmplex.testing import FakeError, ProviderConformanceTests, Reply
from llmplex.testing.http import HTTPFake, sse_response
from tests.contract import fixtures_openai as wire
from tests.contract.openapi import validate_openai
from tests.plugins.openai.test_conformance import ERRORS, calls_of, usage_of, words_of

SERVER_URL = "http://127.0.0.1:8999/v1"


class TestLlamaCppConformance(ProviderConformanceTests):
    prefix = "llamacpp"
    model = wire.MODEL  # the stream builders report this model
    secret_setting = None
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    always_sent_options = frozenset({"max_tokens"})

    @pytest.fixture
    def transport(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[HTTPFake]:
        monkeypatch.setattr(LocalClients, "server", lambda self, model: SimpleNamespace(openai_base_url=SERVER_URL))
        with respx.mock(base_url=SERVER_URL, assert_all_called=False) as router:
            yield HTTPFake(router.post("/chat/completions"))

    def fake_response(self, transport: HTTPFake, reply: Reply) -> None:
        calls = calls_of(reply)
        body = wire.chat_completion(
            reply.text or None,
            finish_reason="tool_calls" if calls else "stop",
            tool_calls=calls or None,
            usage=usage_of(reply),
            model=reply.model,
        )
        validate_openai("CreateChatCompletionResponse", body)
        transport.push(httpx.Response(200, json=body))

    def fake_stream(self, transport: HTTPFake, reply: Reply) -> None:
        if reply.tool_calls:
            (call,) = calls_of(reply)
            chunks = wire.chat_stream_tool_call(call, usage=usage_of(reply))
        else:
            chunks = wire.chat_stream_text(words_of(reply.text), usage=usage_of(reply))
        transport.push(sse_response([*chunks, "[DONE]"]))

    def fake_error(self, transport: HTTPFake, error: FakeError) -> None:
        if error.kind == "connection":
            transport.push(httpx.ConnectError("connection refused"))
        elif error.kind == "timeout":
            transport.push(httpx.ReadTimeout("read timed out"))
        else:
            status, kind, code = ERRORS[error.kind]
            headers = {"retry-after": f"{error.retry_after:g}"} if error.retry_after is not None else {}
            transport.push(
                httpx.Response(status, json=wire.error_body(error.message, kind, code=code), headers=headers)
            )

    def sent_payloads(self, transport: HTTPFake) -> Sequence[Any]:
        return transport.bodies
