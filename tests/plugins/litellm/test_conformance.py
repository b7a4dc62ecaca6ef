"""The litellm plugin passes the conformance kit against the kit's local OpenAI-compatible server."""

from __future__ import annotations

from typing import Any

import pytest

from llmplex.client import Client
from llmplex.testing.server import WireServer
from tests.conformance.openai_wire import OpenAIWireConformance


class TestLiteLLMConformance(OpenAIWireConformance):
    prefix = "litellm"
    model = "openai/gemma"
    sent_model = "gemma"  # LiteLLM routes by the "openai/" prefix and sends the rest
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    input_parts = frozenset({"image", "document", "audio"})

    def server_settings(self, url: str) -> dict[str, Any]:
        """LiteLLM's OpenAI route takes the server as ``api_base``."""
        return {"api_base": url + self.base_path}

    @pytest.mark.xfail(
        reason="LiteLLM names streamed chunks after the model it was asked for ('gemma'), and whole answers "
        "after the model the server reports, so Response.model differs between complete and stream",
        strict=True,
    )
    def test_sync_async_parity(self, llm: Client, transport: WireServer) -> None:
        super().test_sync_async_parity(llm, transport)

    @pytest.mark.xfail(
        reason="LiteLLM's stream wrapper drops OpenAI's refusal deltas, so a streamed refusal cannot be seen",
        strict=True,
    )
    def test_streamed_refusal(self, llm: Client, transport: WireServer) -> None:
        super().test_streamed_refusal(llm, transport)

    @pytest.mark.xfail(
        reason="LiteLLM names streamed chunks after the model it was asked for ('gemma'), not the snapshot the "
        "server answered with; usage and cost still match (core prices the asked model when the answer's "
        "cannot be priced)",
        strict=True,
    )
    def test_stream_counts_like_the_whole_answer(self, llm: Client, transport: WireServer) -> None:
        super().test_stream_counts_like_the_whole_answer(llm, transport)
