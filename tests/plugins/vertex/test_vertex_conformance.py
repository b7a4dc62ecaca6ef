"""The vertex plugin passes the conformance kit for both model families, the real SDKs talking to the kit's server."""

from __future__ import annotations

from typing import Any, ClassVar

from llmplex.testing import HTTPConformanceTests, WireAdapter
from tests.plugins.gemini.generate_wire import GenerateWire
from tests.plugins.vertex.wire import VertexMessagesWire


class _VertexKit(HTTPConformanceTests):
    """What both families declare alike: the prefix, project and location, the access token as the secret."""

    prefix = "vertex"
    settings: ClassVar[dict[str, Any]] = {"project": "kit-project", "location": "us-east5"}
    secret_setting = "access_token"
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    keeps_reasoning = True


class TestVertexGeminiConformance(_VertexKit):
    model = "gemini-2.5-flash"
    wire: ClassVar[WireAdapter] = GenerateWire()
    input_parts = frozenset({"image", "document", "audio"})


class TestVertexClaudeConformance(_VertexKit):
    model = "claude-haiku-4-5@20251001"
    wire: ClassVar[WireAdapter] = VertexMessagesWire()
    input_parts = frozenset({"image", "document"})
    usage_fields = frozenset({"input_tokens", "output_tokens", "cached_tokens"})
    always_sent_options = frozenset({"max_tokens"})
