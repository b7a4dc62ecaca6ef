"""The gemini plugin passes the conformance kit, the real google-genai SDK talking to the kit's local server."""

from __future__ import annotations

from typing import ClassVar

import pytest

from llmplex.testing import HTTPConformanceTests, WireAdapter
from tests.plugins.gemini import wire
from tests.plugins.gemini.generate_wire import GenerateWire


class TestGeminiConformance(HTTPConformanceTests):
    prefix = "gemini"
    model = wire.MODEL
    wire: ClassVar[WireAdapter] = GenerateWire()
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    input_parts = frozenset({"image", "document", "audio"})
    keeps_reasoning = True

    @pytest.fixture(autouse=True)
    def _no_google_keys(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
        monkeypatch.delenv("GEMINI_API_KEY", raising=False)
