"""The llamacpp plugin passes the conformance kit, its local server replaced by respx under the OpenAI SDK."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from llmplex_llamacpp.local_clients import LocalClients

from tests.conformance.openai_wire import OpenAIWireConformance
from tests.contract import fixtures_openai as wire


class TestLlamaCppConformance(OpenAIWireConformance):
    prefix = "llamacpp"
    model = wire.MODEL  # the stream builders report this model
    secret_setting = None
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    always_sent_options = frozenset({"max_tokens"})
    base_url = "http://127.0.0.1:8999/v1"

    @pytest.fixture(autouse=True)
    def _no_local_server(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The plugin is pointed at ``base_url`` instead of starting llama.cpp."""
        monkeypatch.setattr(LocalClients, "server", lambda _, model: SimpleNamespace(openai_base_url=self.base_url))
