"""The anthropic plugin passes the conformance kit, the real SDK talking to the kit's local server."""

from __future__ import annotations

from typing import ClassVar

from llmplex.testing import HTTPConformanceTests, WireAdapter
from tests.plugins.anthropic import wire
from tests.plugins.anthropic.messages_wire import MessagesWire


class TestAnthropicConformance(HTTPConformanceTests):
    prefix = "anthropic"
    model = wire.MODEL
    wire: ClassVar[WireAdapter] = MessagesWire()
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    input_parts = frozenset({"image", "document"})
    usage_fields = frozenset({"input_tokens", "output_tokens", "cached_tokens"})
    always_sent_options = frozenset({"max_tokens"})
    keeps_reasoning = True
