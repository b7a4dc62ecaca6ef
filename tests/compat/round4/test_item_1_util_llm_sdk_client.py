"""Issue 35 item 1: util_llm's ``OpenAIAdapter.client`` is an OpenAI SDK client (or the same surface), injectable,
and every call through it still runs inside llmplex's engine (retries, throttling, deadline, budget, events)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any
from unittest.mock import AsyncMock, MagicMock

import httpx
import openai
import pytest
from pydantic import BaseModel

from llmplex import errors as core
from llmplex import hookimpl
from llmplex.client import Client
from llmplex.compat.util_llm import (
    LLMError,
    LLMIncompleteError,
    LLMRateLimitError,
    LLMRefusalError,
    OpenAIAdapter,
)
from llmplex.errors import LLMConfigurationError
from llmplex.events import RequestStarted, Throttled
from llmplex.reliability.budget import Budget

KEY = "sk-round4-util-llm-5f1e2d3c4b5a69788"


class Answer(BaseModel):
    answer: str


@dataclass
class Phase:
    model: str = "gpt-test"
    is_reasoning: bool = False
    max_completion: int = 256
    timeout: float = 30
    max_retries: int = 2
    reasoning_effort: str | None = None
    reasoning_summary: str | None = None
    verbosity: str | None = None
    truncation: str | None = None


def sdk_answer(**overrides: Any) -> SimpleNamespace:
    """A ``responses.parse`` answer shaped as the SDK's ``ParsedResponse`` (attributes only)."""
    fields: dict[str, Any] = {
        "id": "resp_1",
        "status": "completed",
        "model": "gpt-test",
        "created_at": 1700000000,
        "service_tier": "default",
        "output": [SimpleNamespace(type="message", content=[SimpleNamespace(type="output_text", text="{}")])],
        "output_parsed": Answer(answer="42"),
        "usage": SimpleNamespace(
            input_tokens=10,
            output_tokens=5,
            total_tokens=15,
            input_tokens_details=SimpleNamespace(cached_tokens=0),
            output_tokens_details=SimpleNamespace(reasoning_tokens=0),
        ),
    }
    return SimpleNamespace(**{**fields, **overrides})


def rate_limit() -> openai.RateLimitError:
    response = httpx.Response(429, headers={"retry-after": "0"}, request=httpx.Request("POST", "https://x/v1"))
    return openai.RateLimitError("Rate limit exceeded", response=response, body=None)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("LLMPLEX_THROTTLE__BASE_DELAY", "0")
    monkeypatch.setenv("LLMPLEX_THROTTLE__MAX_DELAY", "0")


def test_item_1_client_is_an_async_openai_sdk_client_without_sdk_retries() -> None:
    adapter = OpenAIAdapter(Phase())
    assert isinstance(adapter.client, openai.AsyncOpenAI)
    assert adapter.client.max_retries == 0  # retries happen once, in llmplex
    assert KEY not in repr(adapter) and isinstance(adapter.llmplex_client, Client)


async def test_item_1_a_mock_set_on_the_client_is_what_gets_called_with_util_llms_parameters() -> None:
    adapter = OpenAIAdapter(Phase(max_completion=128))
    parsed = Answer(answer="42")
    adapter.client.responses.parse = AsyncMock(return_value=sdk_answer(output_parsed=parsed))
    answer = await adapter.execute("Answer briefly.", "6 * 7?", Answer, previous_response_id="resp_0")
    assert answer.parsed is parsed and answer.response_id == "resp_1" and answer.usage.total_tokens == 15
    kwargs = adapter.client.responses.parse.call_args.kwargs
    assert kwargs == {
        "model": "gpt-test",
        "instructions": "Answer briefly.",
        "input": "6 * 7?",
        "text_format": Answer,
        "store": True,
        "max_output_tokens": 128,
        "previous_response_id": "resp_0",
    }


async def test_item_1_an_injected_client_is_used_for_parse_and_delete() -> None:
    fake = SimpleNamespace(
        responses=SimpleNamespace(parse=AsyncMock(return_value=sdk_answer()), delete=AsyncMock(return_value=None))
    )
    adapter = OpenAIAdapter(Phase(), client=fake)
    assert adapter.client is fake
    assert (await adapter.execute("i", "x", Answer)).parsed == Answer(answer="42")
    assert await adapter.delete_response("resp_1") is True
    fake.responses.delete.assert_awaited_once_with("resp_1")
    fake.responses.delete.side_effect = RuntimeError("gone")
    assert await adapter.delete_response("resp_2") is False  # logged, never raised


def test_item_1_a_client_without_the_responses_surface_is_refused_at_once() -> None:
    with pytest.raises(LLMConfigurationError, match=r"responses\.parse"):
        OpenAIAdapter(Phase(), client=object())


async def test_item_1_llmplex_retries_and_events_wrap_the_mocked_call() -> None:
    adapter = OpenAIAdapter(Phase(max_retries=2))
    seen: list[object] = []

    class Observer:
        @hookimpl
        def llmplex_event(self, event: object) -> None:
            seen.append(event)

    adapter.llmplex_client.host.register_observer(Observer())
    adapter.client.responses.parse = AsyncMock(side_effect=[rate_limit(), sdk_answer()])
    answer = await adapter.execute("i", "x", Answer)
    assert answer.parsed == Answer(answer="42") and adapter.client.responses.parse.await_count == 2
    assert any(isinstance(e, Throttled) for e in seen) and any(isinstance(e, RequestStarted) for e in seen)


async def test_item_1_exhausted_retries_say_how_many_attempts_and_are_util_llm_classes() -> None:
    adapter = OpenAIAdapter(Phase(max_retries=1))
    adapter.client.responses.parse = AsyncMock(side_effect=rate_limit())
    with pytest.raises(LLMRateLimitError, match="after 2 attempts") as caught:
        await adapter.execute("i", "x", Answer)
    assert isinstance(caught.value, core.LLMRateLimitError) and adapter.client.responses.parse.await_count == 2


async def test_item_1_the_deadline_ends_a_hanging_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMPLEX_TIMEOUT", "0.3")
    adapter = OpenAIAdapter(Phase(max_retries=0))
    never = asyncio.Event()

    async def hang(**_: Any) -> Any:
        await never.wait()

    adapter.client.responses.parse = hang
    with pytest.raises(LLMError) as caught:
        await adapter.execute("i", "x", Answer)
    assert isinstance(caught.value, (core.LLMTimeoutError, core.LLMDeadlineExceededError))


async def test_item_1_a_budget_of_the_llmplex_client_refuses_before_the_mock_is_called() -> None:
    adapter = OpenAIAdapter(Phase(), llmplex_client=Client(budget=Budget(max_total_tokens=15)))
    adapter.client.responses.parse = AsyncMock(return_value=sdk_answer())
    await adapter.execute("i", "x", Answer)  # spends the 15 tokens
    with pytest.raises(core.LLMBudgetExceededError):
        await adapter.execute("i", "x", Answer)
    assert adapter.client.responses.parse.await_count == 1


async def test_item_1_refusal_and_incomplete_keep_util_llms_fields_and_are_not_retried() -> None:
    adapter = OpenAIAdapter(Phase(max_retries=3))
    refused = [SimpleNamespace(content=[SimpleNamespace(type="refusal", refusal="I cannot assist.")])]
    adapter.client.responses.parse = AsyncMock(return_value=sdk_answer(output=refused, output_parsed=None))
    with pytest.raises(LLMRefusalError) as refusal:
        await adapter.execute("i", "x", Answer)
    assert refusal.value.refusal_message == "I cannot assist." and adapter.client.responses.parse.await_count == 1
    cut = sdk_answer(status="incomplete", incomplete_details=SimpleNamespace(reason="max_output_tokens"))
    adapter.client.responses.parse = AsyncMock(return_value=cut)
    with pytest.raises(LLMIncompleteError) as incomplete:
        await adapter.execute("i", "x", Answer)
    assert incomplete.value.reason == "max_output_tokens" and adapter.client.responses.parse.await_count == 1


async def test_item_1_hostile_answers_are_typed_errors_not_crashes() -> None:
    adapter = OpenAIAdapter(Phase(max_retries=0))
    adapter.client.responses.parse = AsyncMock(return_value=sdk_answer(output_parsed=None))
    with pytest.raises(LLMError, match="no parsed output"):
        await adapter.execute("i", "x", Answer)
    failed = sdk_answer(status="failed", error=SimpleNamespace(message="Internal server error"))
    adapter.client.responses.parse = AsyncMock(return_value=failed)
    with pytest.raises(LLMError, match="Internal server error"):
        await adapter.execute("i", "x", Answer)
    adapter.client.responses.parse = MagicMock(side_effect=ValueError(f"bad {KEY}"))
    with pytest.raises(LLMError) as caught:
        await adapter.execute("i", "x", Answer)
    assert KEY not in str(caught.value)
