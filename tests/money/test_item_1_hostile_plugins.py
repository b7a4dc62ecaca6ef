"""Issue 21 item 1, hostile: every shipped plugin's answer reporting impossible usage fails alone with LLMUsageError,
whole or streamed, and nothing of it is counted."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

import llmplex
from llmplex import Budget, BudgetTracker, LLMUsageError
from llmplex.testing.server import Answer, WireServer
from tests.money import recorded
from tests.money.golden import GOLDEN, client_for, server

__all__ = ["server"]

Json = dict[str, Any]


def _chat(usage: Json) -> Json:
    body = copy.deepcopy(recorded.CHAT_COMPLETION)
    body["usage"] = usage
    return body


def _responses(usage: Json) -> Json:
    body = copy.deepcopy(recorded.RESPONSES_RESPONSE)
    body["usage"] = usage
    return body


def _anthropic(usage: Json) -> Json:
    body = copy.deepcopy(recorded.ANTHROPIC_MESSAGE)
    body["usage"] = usage
    return body


def _gemini(usage: Json) -> Json:
    body = copy.deepcopy(recorded.GEMINI_RESPONSE)
    body["usageMetadata"] = usage
    return body


CHAT_OVER = {**recorded.CHAT_USAGE, "prompt_tokens_details": {"cached_tokens": 5000}}
HOSTILE: dict[str, tuple[str, Callable[[Json], Json], Json]] = {
    "openai-chat-negative": ("openai-chat", _chat, {**recorded.CHAT_USAGE, "completion_tokens": -300}),
    "openai-chat-cached-over-input": ("openai-chat", _chat, CHAT_OVER),
    "openai-responses-absurd": (
        "openai-responses",
        _responses,
        {**recorded.RESPONSES_RESPONSE["usage"], "input_tokens": 10**18, "total_tokens": 10**18 + 500},
    ),
    "anthropic-negative-cache-read": (
        "anthropic",
        _anthropic,
        {**recorded.ANTHROPIC_MESSAGE["usage"], "cache_read_input_tokens": -3000},
    ),
    "gemini-thoughts-over-total": (
        "gemini",
        _gemini,
        {**recorded.GEMINI_USAGE, "totalTokenCount": 10},
    ),
    "litellm-negative": ("litellm", _chat, {**recorded.CHAT_USAGE, "prompt_tokens": -1, "total_tokens": 299}),
    "llamacpp-reasoning-over-output": (
        "llamacpp",
        _chat,
        {**recorded.CHAT_USAGE, "completion_tokens_details": {"reasoning_tokens": 301}},
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_item_1_each_plugins_hostile_usage_is_a_typed_error_counting_nothing(server: WireServer, name: str) -> None:
    case_name, shape, usage = HOSTILE[name]
    case = GOLDEN[case_name]
    tracker = BudgetTracker(Budget(max_total_tokens=10**6))
    server.push(Answer.json(200, shape(usage)))

    with pytest.raises(LLMUsageError, match="usage"):
        client_for(case, server.url).complete(case.spec, "Capital of France?", budget=tracker, max_tokens=500)

    assert tracker.snapshot().total_tokens == 0


def test_item_1_a_hostile_usage_names_no_secret(server: WireServer) -> None:
    case = GOLDEN["openai-chat"]
    server.push(Answer.json(200, _chat(CHAT_OVER)))
    with pytest.raises(LLMUsageError) as caught:
        client_for(case, server.url).complete(case.spec, "hi")
    assert "sk-test-money" not in repr(caught.value) + str(caught.value) + repr(caught.value.context)


def test_item_1_llmplex_exports_the_usage_error() -> None:
    assert llmplex.LLMUsageError is LLMUsageError
    assert issubclass(LLMUsageError, llmplex.LLMServerError)
