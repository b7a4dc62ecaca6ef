"""The reference third-party plugin passes the conformance kit against a local OpenAI-compatible server."""

from __future__ import annotations

from tests.conformance.openai_wire import OpenAIWireConformance


class TestReferenceConformance(OpenAIWireConformance):
    prefix = "reference"
    model = "reference-1"
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
