"""The llamacpp plugin passes the conformance kit, its local llama.cpp server replaced by the kit's server."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from llmplex_llamacpp.server import LocalServer

from llmplex.testing.server import WireServer
from tests.conformance.openai_wire import OpenAIWireConformance
from tests.contract import fixtures_openai as wire


class TestLlamaCppConformance(OpenAIWireConformance):
    prefix = "llamacpp"
    model = wire.MODEL
    secret_setting = None
    supports_tools = True
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    always_sent_options = frozenset({"max_tokens"})

    def server_settings(self, url: str) -> dict[str, Any]:
        """The plugin starts its own server: the fixture below points it at the kit's instead."""
        return {}

    @pytest.fixture(autouse=True)
    def _no_local_server(self, monkeypatch: pytest.MonkeyPatch, transport: WireServer) -> None:
        """The plugin is pointed at the kit's server instead of starting llama.cpp."""
        url = transport.url + self.base_path
        monkeypatch.setattr(LocalServer, "for_model", lambda model, **_: SimpleNamespace(openai_base_url=url))
