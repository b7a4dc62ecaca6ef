"""Issue 34 item 2: a finished answer is copied once (where it came from, its priced usage and what was dropped set
together), and pricing a usage copies it without touching the usage it came from."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

import llmplex
from llmplex.errors import LLMUsageError
from llmplex.types import Message, ReasoningPart, Usage

BASE = "http://127.0.0.1:8942/v1"
ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11},
}


@pytest.fixture
def wire() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as router:
        router.post(f"{BASE}/chat/completions").mock(side_effect=lambda _: httpx.Response(200, json=ANSWER))
        yield router


def _client(**settings: Any) -> llmplex.Client:
    table = {"plugin": "openai", "base_url": BASE, "api": "chat", "api_key": "sk-item2", **settings}
    return llmplex.Client(providers={"local": table}, disabled=["recorder", "exitobserver"])


def test_item_2_the_finished_answer_carries_its_origin_priced_usage_and_drops(wire: respx.MockRouter) -> None:
    response = _client().complete("local:gpt-4o-mini", "hi")
    assert (response.provider, response.model, response.attempts) == ("local", "gpt-4o-mini-2024-07-18", 1)
    assert response.latency > 0 and response.dropped == ()
    assert response.usage == Usage(input_tokens=9, output_tokens=2) and response.usage.cost_usd is not None
    thought = ReasoningPart(format="anthropic-thinking", text="t", data={"signature": "s"})
    turns = [
        Message(role="user", content="hi"),
        Message.assistant("Hi", (), (thought,)),
        Message(role="user", content="and?"),
    ]
    dropped = _client().complete("local:gpt-4o-mini", turns)  # another provider's reasoning: always left out
    assert dropped.usage.cost_usd == response.usage.cost_usd  # same tokens, same model: same price
    assert dropped.dropped and dropped.provider == "local" and dropped.text == "Hello"


def test_item_2_an_answer_without_a_model_is_priced_as_the_model_asked(wire: respx.MockRouter) -> None:
    wire.routes.clear()
    wire.post(f"{BASE}/chat/completions").mock(return_value=httpx.Response(200, json={**ANSWER, "model": ""}))
    response = _client().complete("local:gpt-4o-mini", "hi")
    assert response.model == "gpt-4o-mini" and response.usage.cost_usd is not None


def test_item_2_pricing_copies_the_usage_and_leaves_the_original_unpriced() -> None:
    usage = Usage(input_tokens=1000, output_tokens=10)
    priced = usage.priced("openai", "gpt-4o-mini")
    assert priced is not usage and priced == usage
    assert priced.cost_usd is not None and usage.cost_usd is None
    assert priced.priced("openai", "gpt-4o-mini") is priced  # priced as it was: no further copy
    assert priced.priced("openai", "gpt-4o-mini", batch=True).cost_usd != priced.cost_usd


def test_item_2_a_part_larger_than_its_holder_is_still_refused() -> None:
    with pytest.raises(LLMUsageError, match=r"output_audio_tokens \(5\) exceed output_tokens \(4\)"):
        Usage(input_tokens=1, output_tokens=4, output_audio_tokens=5)
    with pytest.raises(LLMUsageError, match=r"cached_audio_tokens \(3\) exceed cached_tokens \(2\)"):
        Usage(input_tokens=9, cached_tokens=2, input_audio_tokens=4, cached_audio_tokens=3)
