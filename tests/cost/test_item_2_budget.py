"""Issue 16 item 2: ``Budget(max_cost_usd=...)`` and ``[budget] max_cost_usd`` stop calls once spent."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path

import genai_prices
import pytest

import llmplex
from llmplex import (
    Budget,
    BudgetTracker,
    LLMBudgetExceededError,
    LLMConfigurationError,
    Response,
    SharedBudgetTracker,
)
from tests.contract import fixtures_openai as fx
from tests.plugins.openai.conftest import FakeAPI

CALLS = 30
ONE = genai_prices.calc_price(
    genai_prices.Usage(input_tokens=1000, output_tokens=100), fx.MODEL, provider_id="openai"
).total_price
CAP = ONE * 5 + ONE / 2  # five and a half answers
PROMPT = "word " * 800  # 4000 characters: estimated at the 1000 input tokens the fake reports


@pytest.mark.parametrize("shared", [False, True], ids=["in-process", "shared-storage"])
@pytest.mark.parametrize("max_tokens", [100, None], ids=["max_tokens", "unbounded-answers"])
def test_item_2_concurrent_calls_overshoot_a_cost_cap_by_at_most_one_request(
    openai_api: FakeAPI, max_tokens: int | None, shared: bool
) -> None:
    openai_api.reply("/chat/completions", fx.chat_completion("Hi", usage=fx.TokenUsage(1000, 100)))
    budget = Budget(max_cost_usd=CAP)
    tracker = SharedBudgetTracker(budget, name=f"cost-{max_tokens}") if shared else BudgetTracker(budget)
    client = llmplex.Client(providers={"openai": {"api": "chat"}}, throttle={"max_attempts": 1}, budget=tracker)

    async def one() -> object:
        try:
            return await client.acomplete("openai:gpt-4o-mini", PROMPT, max_tokens=max_tokens)
        except llmplex.LLMError as error:
            return error

    async def run() -> list[object]:
        return list(await asyncio.gather(*(one() for _ in range(CALLS))))

    results = asyncio.run(run())
    answers = [r for r in results if isinstance(r, Response)]
    refused = [r for r in results if isinstance(r, LLMBudgetExceededError)]
    assert len(answers) + len(refused) == CALLS
    spent = tracker.snapshot().cost_usd
    assert spent == sum(r.usage.cost_usd or 0 for r in answers) == ONE * len(answers)
    assert CAP <= spent <= CAP + ONE, (spent, len(answers))
    assert len(openai_api.requests) == len(answers)
    assert "max_cost_usd" in str(refused[0])


def test_item_2_unknown_price_under_a_cost_cap_is_refused_before_sending(openai_api: FakeAPI) -> None:
    client = llmplex.Client(budget=Budget(max_cost_usd=1))

    with pytest.raises(LLMConfigurationError, match="openai:my-private-fine-tune") as caught:
        client.complete("openai:my-private-fine-tune", "hi")

    assert "max_cost_usd" in str(caught.value)
    assert openai_api.requests == []
    with pytest.raises(LLMConfigurationError, match="mock:echo"):
        client.complete("mock:echo", "hi")


def test_item_2_config_budget_max_cost_usd_caps_the_client(
    openai_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    openai_api.reply("/chat/completions", fx.chat_completion("Hi", usage=fx.TokenUsage(1000, 100)))
    config = tmp_path / "llmplex.toml"
    config.write_text(f'[providers.openai]\napi = "chat"\n\n[budget]\nmax_cost_usd = {ONE * 2}\n', encoding="utf-8")
    monkeypatch.setenv("LLMPLEX_CONFIG", str(config))
    client = llmplex.Client(throttle={"max_attempts": 1})

    client.complete("openai:gpt-4o-mini", "hi", max_tokens=10)
    client.complete("openai:gpt-4o-mini", "hi", max_tokens=10)
    with pytest.raises(LLMBudgetExceededError, match="max_cost_usd"):
        client.complete("openai:gpt-4o-mini", "hi", max_tokens=10)
    assert len(openai_api.requests) == 2


@pytest.mark.parametrize("bad", [-1, "lots", float("nan"), True])
def test_item_2_bad_cost_cap_is_a_configuration_error(bad: object) -> None:
    with pytest.raises(LLMConfigurationError, match="max_cost_usd"):
        Budget(max_cost_usd=bad)  # type: ignore[arg-type]


def test_item_2_cost_cap_is_kept_exactly_as_a_decimal() -> None:
    assert Budget(max_cost_usd=0.1).max_cost_usd == Decimal("0.1")
