"""The litellm plugin end to end against the real local model: ``litellm:openai/<alias>`` with ``api_base``.

LiteLLM's OpenAI-compatible path talks to llama.cpp's ``/v1/chat/completions``.
The model is the small 270M *base* model: these tests assert wire shapes and types, not
what it says. ``max_tokens`` keeps every answer short.
"""

from __future__ import annotations

import pytest
from llmplex_llamacpp.server import LocalServer

import llmplex
from llmplex.errors import LLMBadRequestError

MODEL = "litellm:openai/gemma3-270m"


@pytest.fixture
def llm(small_server: LocalServer) -> llmplex.Client:
    """``litellm:`` pointed at the local server (llama.cpp ignores the key, LiteLLM wants one)."""
    return llmplex.Client(
        providers={"litellm": {"api_base": small_server.openai_base_url, "api_key": "sk-no-key-required"}},
        throttle={"max_attempts": 2, "base_delay": 0.05},
    )


def test_complete(llm: llmplex.Client) -> None:
    response = llm.complete(MODEL, "The capital of France is", max_tokens=8, temperature=0, seed=1)
    assert isinstance(response.text, str) and response.text
    assert response.provider == "litellm"
    assert response.finish_reason in ("stop", "length")
    assert response.usage.output_tokens <= 8 and response.usage.input_tokens > 0


async def test_acomplete(llm: llmplex.Client) -> None:
    response = await llm.acomplete(MODEL, "One, two, three,", max_tokens=6, temperature=0)
    assert response.text and response.usage.output_tokens <= 6


def test_stream(llm: llmplex.Client) -> None:
    events = list(llm.stream(MODEL, "Once upon a time", max_tokens=8, temperature=0))
    deltas = [e.text for e in events if e.type == "text"]
    final = events[-1].response
    assert final is not None and deltas
    assert final.text == "".join(deltas)
    assert final.usage.output_tokens > 0


async def test_astream(llm: llmplex.Client) -> None:
    events = [e async for e in llm.astream(MODEL, "Hello", max_tokens=5, temperature=0)]
    assert events[-1].response is not None and events[-1].response.usage.output_tokens > 0


def test_prompt_over_the_context_window_is_a_bad_request(llm: llmplex.Client) -> None:
    with pytest.raises(LLMBadRequestError) as caught:
        llm.complete(MODEL, "word " * 5000, max_tokens=1)
    assert caught.value.status_code == 400 and not caught.value.retryable
