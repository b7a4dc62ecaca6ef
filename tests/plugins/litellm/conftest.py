"""A LiteLLM client in front of the fault-injecting OpenAI-compatible server.

``litellm:openai/<model>`` with ``api_base`` takes LiteLLM's OpenAI-compatible
path (the OpenAI SDK inside LiteLLM), so the fake is a real local HTTP server:
it answers whatever transport LiteLLM picks (httpx or aiohttp).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import llmplex
from tests.support.fault_server import FaultServer

API_KEY = "sk-test-litellm-5e4d3c2b1a09"
MODEL = "litellm:openai/gemma"


@pytest.fixture
def server() -> Iterator[FaultServer]:
    """A started fault server, answering successes until told otherwise."""
    with FaultServer() as fake:
        yield fake


@pytest.fixture
def llm(server: FaultServer) -> llmplex.Client:
    """A client whose ``litellm`` provider points at ``server``; one attempt per call."""
    return llmplex.Client(
        providers={"litellm": {"api_base": server.url, "api_key": API_KEY}},
        throttle={"max_attempts": 1},
    )
