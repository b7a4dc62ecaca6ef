"""The litellm plugin passes the conformance kit against the fault-injecting OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from llmplex.client import Client
from llmplex.testing import FakeError, Observed, ProviderConformanceTests, Reply
from llmplex.testing.kit import SECRET
from tests.conformance.openai_wire import calls_of, error_answer, usage_of
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import FaultServer
from tests.support.faults import Fault


class TestLiteLLMConformance(ProviderConformanceTests):
    prefix = "litellm"
    model = "openai/gemma"
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    unsupported_error_kinds = {
        "timeout": "the fault server can only hang, and without a deadline LiteLLM has no timeout to hit "
        "(the deadline becoming LiteLLM's timeout is tested in test_litellm.py)",
    }

    @pytest.fixture
    def server(self) -> Iterator[FaultServer]:
        with FaultServer() as fake:
            yield fake

    @pytest.fixture
    def llm(self, observed: Observed, server: FaultServer) -> Client:
        settings = {"api_base": server.url, "api_key": SECRET}
        return Client(providers={"litellm": settings}, throttle={"max_attempts": 1}, plugins=[observed])

    @pytest.fixture
    def transport(self, server: FaultServer) -> FaultServer:
        return server

    def fake_response(self, transport: FaultServer, reply: Reply) -> None:
        if not reply.tool_calls:
            transport.enqueue(Fault.ok(reply.text, usage_of(reply)))
            return
        transport.enqueue(Fault.json(200, fx.chat_completion_tool_calls(*calls_of(reply), usage=usage_of(reply))))

    def fake_error(self, transport: FaultServer, error: FakeError) -> None:
        if error.kind in ("connection", "timeout"):
            transport.enqueue(Fault.reset())
            return
        transport.enqueue(Fault.json(*error_answer(error)))

    def sent_payloads(self, transport: FaultServer) -> Sequence[Any]:
        return [request.body for request in transport.requests]

    @pytest.mark.xfail(reason="the fault server (tests/support) streams text only, not tool calls", strict=True)
    def test_stream_tool_calls_match_complete(self, llm: Client, transport: FaultServer) -> None:
        super().test_stream_tool_calls_match_complete(llm, transport)
