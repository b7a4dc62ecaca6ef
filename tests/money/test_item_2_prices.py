"""Issue 21 item 2: cost that matches the invoice — batch prices, gateway and snapshot model ids, unknown prices
that are ``None`` with a note (never 0), and USD budgets that refuse what they cannot price before sending."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from llmplex_openai.batch import _outcome
from openai.types.chat import ChatCompletion

import llmplex
from llmplex import (
    Budget,
    BudgetTracker,
    LLMBudgetExceededError,
    LLMConfigurationError,
    LLMUsageError,
    Response,
    SharedBudgetTracker,
    Usage,
)
from llmplex.batching.provider_rows import prepare_row
from llmplex.testing.server import Answer, WireServer
from tests.money import recorded

M = Decimal(1_000_000)
# gpt-4o-mini, US dollars per million tokens (openai.com/api/pricing, read 2026-11-26; genai-prices 0.2.3 agrees):
# standard input 0.15, cached input 0.075, output 0.60; Batch API input 0.075, output 0.30
GPT_4O_MINI = {"input": Decimal("0.15"), "cache_read": Decimal("0.075"), "output": Decimal("0.60")}
GPT_4O_MINI_BATCH = {"input": Decimal("0.075"), "output": Decimal("0.30")}
ONE_ANSWER = (1000 * GPT_4O_MINI["input"] + 100 * GPT_4O_MINI["output"]) / M
USAGE_1000_100 = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


def _settings(server: WireServer) -> dict[str, Any]:
    return {"api": "chat", "api_key": "sk-test-money", "base_url": server.url + "/v1"}


def _client(server: WireServer, **kwargs: Any) -> llmplex.Client:
    return llmplex.Client(providers={"openai": _settings(server)}, throttle={"max_attempts": 1}, **kwargs)


# -- batch prices ------------------------------------------------------------------------------


def _batch_line(custom_id: str, usage: dict[str, Any]) -> str:
    """One line of an OpenAI Batch API output file (platform.openai.com/docs/guides/batch)."""
    body = recorded.chat_completion("gpt-4o-mini-2024-07-18", usage)
    response = {"status_code": 200, "request_id": f"req_{custom_id}", "body": body}
    return json.dumps({"id": f"batch_req_{custom_id}", "custom_id": custom_id, "response": response, "error": None})


def test_item_2_provider_batch_rows_cost_the_batch_price_and_a_hostile_row_fails_alone() -> None:
    client = llmplex.Client(providers={"openai": {"api": "chat", "api_key": "sk-test-money"}})
    rows = [prepare_row(client, i, {"model": "openai:gpt-4o-mini", "prompt": f"q{i}"}) for i in range(3)]
    usages = [USAGE_1000_100, {**USAGE_1000_100, "prompt_tokens": -1000, "total_tokens": -900}, USAGE_1000_100]
    outcomes = [_outcome(_batch_line(f"r{i}", usage), ChatCompletion) for i, usage in enumerate(usages)]

    results = [row.result(outcome, "batch_abc123") for row, outcome in zip(rows, outcomes, strict=True)]  # type: ignore[arg-type]

    first, middle, last = results
    assert isinstance(middle, LLMUsageError)
    by_hand = (1000 * GPT_4O_MINI_BATCH["input"] + 100 * GPT_4O_MINI_BATCH["output"]) / M
    for answer in (first, last):
        assert isinstance(answer, Response)
        assert answer.usage.cost_usd == by_hand == ONE_ANSWER / 2


# -- model ids ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answered",
    ["gpt-4o-mini", "gpt-4o-mini-2024-07-18", "openai/gpt-4o-mini", "gpt-4o-mini-2099-01-01"],
    ids=["alias", "dated", "gateway", "future-snapshot"],
)
def test_item_2_gateway_and_snapshot_ids_are_priced_as_their_model(server: WireServer, answered: str) -> None:
    server.push(Answer.json(200, recorded.chat_completion(answered, USAGE_1000_100)))
    usage = _client(server).complete("openai:gpt-4o-mini", "hi").usage
    assert usage.cost_usd == ONE_ANSWER


def test_item_2_a_gateway_id_names_the_provider_that_prices_it() -> None:
    usage = Usage(input_tokens=1000, output_tokens=100)
    # claude-sonnet-4-5 through an OpenAI-compatible gateway: input 3, output 15 per million (anthropic.com/pricing)
    assert usage.priced("openai", "anthropic/claude-sonnet-4-5").cost_usd == (1000 * 3 + 100 * 15) / M
    assert usage.priced("litellm", "openai/gpt-4o-mini").cost_usd == ONE_ANSWER


def test_item_2_an_unpriced_model_costs_none_with_a_note_never_zero(server: WireServer) -> None:
    server.push(Answer.json(200, recorded.chat_completion("ft:my-private-model", USAGE_1000_100)))
    usage = _client(server).complete("openai:ft:my-private-model", "hi").usage

    assert usage.cost_usd is None
    assert usage.cost_note == "genai-prices has no price for openai model 'ft:my-private-model'"
    mock = llmplex.complete("mock:echo", "hi").usage
    assert mock.cost_usd is None
    assert mock.cost_note is not None
    assert "mock" in mock.cost_note
    assert json.loads(llmplex.complete("mock:echo", "hi").model_dump_json())["usage"]["cost_note"] == mock.cost_note


# -- USD budgets -------------------------------------------------------------------------------


@pytest.mark.parametrize("shared", [False, True], ids=["in-process", "shared"])
def test_item_2_a_usd_budget_refuses_an_unpriceable_model_before_sending(server: WireServer, shared: bool) -> None:
    budget = Budget(max_cost_usd=Decimal(1))
    tracker = SharedBudgetTracker(budget, name="unpriced") if shared else BudgetTracker(budget)

    with pytest.raises(LLMConfigurationError, match="unpriced_input_usd_per_mtok") as caught:
        _client(server, budget=tracker).complete("openai:ft:my-private-model", "hi", max_tokens=10)

    assert "openai:ft:my-private-model" in str(caught.value)
    assert server.received == []
    assert tracker.snapshot().requests == 0


@pytest.mark.parametrize("shared", [False, True], ids=["in-process", "shared"])
def test_item_2_a_usd_budget_counts_an_unpriceable_model_at_the_rates_it_is_given(
    server: WireServer, shared: bool
) -> None:
    budget = Budget(
        max_cost_usd=Decimal(1), unpriced_input_usd_per_mtok=Decimal(2), unpriced_output_usd_per_mtok=Decimal(8)
    )
    tracker = SharedBudgetTracker(budget, name="unpriced-rates") if shared else BudgetTracker(budget)
    server.push(Answer.json(200, recorded.chat_completion("ft:my-private-model", USAGE_1000_100)))

    response = _client(server, budget=tracker).complete("openai:ft:my-private-model", "hi", max_tokens=10)

    assert response.usage.cost_usd is None  # the answer itself has no known price
    assert tracker.snapshot().cost_usd == (1000 * 2 + 100 * 8) / M


def test_item_2_config_says_how_to_count_unpriceable_models(
    server: WireServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = "[budget]\nmax_cost_usd = 0.0030\nunpriced_input_usd_per_mtok = 2\nunpriced_output_usd_per_mtok = 8\n"
    (tmp_path / "llmplex.toml").write_text(table, encoding="utf-8")
    monkeypatch.setenv("LLMPLEX_CONFIG", str(tmp_path / "llmplex.toml"))
    for _ in range(2):
        server.push(Answer.json(200, recorded.chat_completion("ft:my-private-model", USAGE_1000_100)))
    llm = _client(server)

    llm.complete("openai:ft:my-private-model", "hi", max_tokens=10)  # $0.0028 counted
    llm.complete("openai:ft:my-private-model", "hi", max_tokens=10)
    with pytest.raises(LLMBudgetExceededError, match="max_cost_usd"):
        llm.complete("openai:ft:my-private-model", "hi", max_tokens=10)
    assert len(server.received) == 2


def test_item_2_unpriced_rates_go_together() -> None:
    with pytest.raises(LLMConfigurationError, match="go together"):
        Budget(max_cost_usd=Decimal(1), unpriced_input_usd_per_mtok=Decimal(2))
    with pytest.raises(LLMConfigurationError, match="unpriced_output_usd_per_mtok"):
        Budget(unpriced_input_usd_per_mtok=Decimal(2), unpriced_output_usd_per_mtok=Decimal(-1))


def test_item_2_an_answer_naming_an_unpriceable_model_counts_its_reserved_cost_not_zero(server: WireServer) -> None:
    tracker = BudgetTracker(Budget(max_cost_usd=Decimal(1)))
    server.push(Answer.json(200, recorded.chat_completion("some-unlisted-snapshot", USAGE_1000_100)))

    response = _client(server, budget=tracker).complete("openai:gpt-4o-mini", "word " * 400, max_tokens=50)

    assert response.usage.cost_usd is None
    # what was reserved for gpt-4o-mini: 500 input tokens (2000 characters) and max_tokens output
    assert tracker.snapshot().cost_usd == (500 * GPT_4O_MINI["input"] + 50 * GPT_4O_MINI["output"]) / M
