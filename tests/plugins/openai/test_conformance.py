"""The openai plugin passes the conformance kit on both of its APIs, against the kit's local server."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from llmplex.testing import WireAdapter
from llmplex.testing.server import WireServer
from tests.conformance.openai_wire import OpenAIWireConformance
from tests.contract import fixtures_openai as wire
from tests.plugins.openai.responses_wire import ResponsesWire


class _OpenAIConformance(OpenAIWireConformance):
    prefix = "openai"
    model = wire.MODEL
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_response_chains = True
    supports_async = True


class TestOpenAIResponsesConformance(_OpenAIConformance):
    """``openai:`` speaks the Responses API by default."""

    settings = {"api": "responses"}
    input_parts = frozenset({"image", "document"})
    keeps_reasoning = True
    wire: ClassVar[WireAdapter] = ResponsesWire()


class TestOpenAIChatConformance(_OpenAIConformance):
    """``api = "chat"`` speaks Chat Completions (the default for OpenAI-compatible servers)."""

    settings = {"api": "chat"}
    input_parts = frozenset({"image", "document", "audio"})

    @pytest.mark.xfail(reason="Chat Completions has no stored responses: previous_response_id is refused", strict=True)
    def test_response_chains(self, llm: Any, transport: WireServer) -> None:
        super().test_response_chains(llm, transport)
