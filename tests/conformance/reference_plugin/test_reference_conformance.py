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
            body["choices"][0]["message"]["reasoning_details"] = [_detail(reply.reasoning)]
        return body

    def chunks(self, reply: Reply) -> list[dict[str, Any]]:
        chunks = super().chunks(reply)
        if reply.reasoning:  # streamed right after the role, before the content
            first = chunks[0]
            delta = {"index": 0, "delta": {"reasoning_details": [_detail(reply.reasoning)]}, "finish_reason": None}
            chunks.insert(1, {**first, "choices": [delta]})
        return chunks


def _detail(token: str) -> dict[str, Any]:
    return {"type": "reasoning.encrypted", "data": token, "id": "rd_kit_1", "index": 0}


class TestReferenceConformance(OpenAIWireConformance):
    prefix = "reference"
    model = "reference-1"
    wire: ClassVar[WireAdapter] = ReasoningChatWire()
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    keeps_reasoning = True
