"""llmplex-echo passes the llmplex conformance kit, its HTTP API faked with respx."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import pytest
import respx

from llmplex.testing import FakeError, ProviderConformanceTests, Reply
from llmplex.testing.http import HTTPFake

BASE_URL = "http://echo.test"
STATUS = {
    "bad_request": (400, "invalid_request"),
    "authentication": (401, "invalid_api_key"),
    "not_found": (404, "model_not_found"),
    "rate_limit": (429, "rate_limited"),
    "quota": (429, "insufficient_quota"),
    "server": (500, "server_error"),
    "overloaded": (503, "overloaded"),
}


class TestEchoConformance(ProviderConformanceTests):
    prefix = "echo"
    model = "echo-1"
    settings = {"base_url": BASE_URL}

    @pytest.fixture
    def transport(self) -> Iterator[HTTPFake]:
        with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
            yield HTTPFake(router.post("/v1/echo"))

    def fake_response(self, transport: HTTPFake, reply: Reply) -> None:
        usage = {"input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens}
        body = {"id": reply.response_id, "model": reply.model, "text": reply.text, "usage": usage}
        transport.push(httpx.Response(200, json=body))

    def fake_error(self, transport: HTTPFake, error: FakeError) -> None:
        if error.kind == "connection":
            transport.push(httpx.ConnectError("connection refused"))
        elif error.kind == "timeout":
            transport.push(httpx.ReadTimeout("read timed out"))
        else:
            status, kind = STATUS[error.kind]
            headers = {"retry-after": str(error.retry_after)} if error.retry_after is not None else {}
            body = {"error": {"type": kind, "message": error.message}}
            transport.push(httpx.Response(status, json=body, headers=headers))

    def sent_payloads(self, transport: HTTPFake) -> Sequence[Any]:
        return transport.bodies
