"""The reference third-party plugin passes the conformance kit against a local OpenAI-compatible server."""

from __future__ import annotations

from typing import Any, ClassVar

from llmplex.testing import Reply, WireAdapter
from tests.conformance.openai_wire import ChatWire, OpenAIWireConformance


class ReasoningChatWire(ChatWire):
    """Chat Completions answers whose message carries ``reasoning_details`` when the reply has reasoning (the
    encrypted detail OpenRouter documents; a field OpenAI's own spec does not have, added after its check)."""

    def response(self, reply: Reply) -> dict[str, Any]:
        body = super().response(reply)
        if reply.reasoning:
            detail = {"type": "reasoning.encrypted", "data": reply.reasoning, "id": "rd_kit_1", "index": 0}
            body["choices"][0]["message"]["reasoning_details"] = [detail]
        return body


class TestReferenceConformance(OpenAIWireConformance):
    prefix = "reference"
    model = "reference-1"
    wire: ClassVar[WireAdapter] = ReasoningChatWire()
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    keeps_reasoning = True
