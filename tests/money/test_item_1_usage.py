"""Issue 21 item 1: usage whose parts cannot be counted twice; hostile usage fails its own answer; missing usage
is unknown, and budgets then count what they reserved, saying so in an event."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import llmplex
from llmplex import Budget, BudgetTracker, LLMUsageError, Response, SharedBudgetTracker, Usage, UsageUnknown
from llmplex.testing.observe import Observed
from llmplex.testing.server import Answer, WireServer
from llmplex.types.usage import MAX_TOKENS
from tests.money import recorded

MODEL = "gpt-4o-mini-2024-07-18"
GOOD = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


def _client(server: WireServer, **kwargs: Any) -> llmplex.Client:
    settings = {"api": "chat", "api_key": "sk-test-money", "base_url": server.url + "/v1"}
    return llmplex.Client(providers={"openai": settings}, throttle={"max_attempts": 1}, **kwargs)


# -- the parts ---------------------------------------------------------------------------


def test_item_1_parts_live_inside_their_totals() -> None:
    usage = Usage(input_tokens=1000, output_tokens=500, cached_tokens=600, cache_write_tokens=300, reasoning_tokens=200)
    assert usage.total_tokens == 1500
    assert Usage(input_tokens=7, output_tokens=3.0) == Usage(input_tokens=7, output_tokens=3)  # a whole float is whole


def test_item_1_each_token_is_priced_once_at_its_parts_rate() -> None:
    usage = Usage(input_tokens=1000, output_tokens=500, cached_tokens=600, cache_write_tokens=300, reasoning_tokens=200)
    # claude-sonnet-4-5, US dollars per million tokens (anthropic.com/pricing, 2026-11-26): input 3, cache read
    # 0.30, 5-minute cache write 3.75, output 15 (thinking is billed as output)
    by_hand = (100 * Decimal(3) + 600 * Decimal("0.30") + 300 * Decimal("3.75") + 500 * Decimal(15)) / 1_000_000
    assert usage.priced("anthropic", "claude-sonnet-4-5").cost_usd == by_hand


@pytest.mark.parametrize(
    ("counts", "named"),
    [
        ({"input_tokens": -5}, "input_tokens"),
        ({"output_tokens": -1}, "output_tokens"),
        ({"input_tokens": 10, "cached_tokens": -1}, "cached_tokens"),
        ({"input_tokens": 10.5}, "input_tokens"),
        ({"output_tokens": float("nan")}, "output_tokens"),
        ({"input_tokens": 10**18}, "input_tokens"),
        ({"input_tokens": MAX_TOKENS + 1}, "input_tokens"),
        ({"reasoning_tokens": True}, "reasoning_tokens"),
        ({"input_tokens": "12"}, "input_tokens"),
        ({"input_tokens": 10, "cached_tokens": 11}, "cached_tokens (11)"),
        ({"input_tokens": 10, "cached_tokens": 6, "cache_write_tokens": 5}, "cache_write_tokens (5)"),
        ({"output_tokens": 10, "reasoning_tokens": 11}, "reasoning_tokens (11)"),
        ({"input_tokens": 10, "output_tokens": 10, "total_tokens": 15}, "total_tokens (15)"),
    ],
)
def test_item_1_impossible_counts_are_a_typed_error(counts: dict[str, Any], named: str) -> None:
    with pytest.raises(LLMUsageError, match=named.replace("(", r"\(").replace(")", r"\)")) as caught:
        Usage(**counts)
    assert not caught.value.retryable


def test_item_1_sums_of_usages_keep_their_parts_and_may_pass_one_answers_limit() -> None:
    big = Usage(input_tokens=MAX_TOKENS, output_tokens=MAX_TOKENS, cached_tokens=MAX_TOKENS)
    total = big + big
    assert (total.input_tokens, total.cached_tokens) == (2 * MAX_TOKENS, 2 * MAX_TOKENS)
    assert total.total_tokens == 4 * MAX_TOKENS


# -- hostile answers ---------------------------------------------------------------------

HOSTILE: dict[str, dict[str, Any]] = {
    "negative": {"prompt_tokens": -100, "completion_tokens": 20, "total_tokens": -80},
    "fractional": {"prompt_tokens": 100.5, "completion_tokens": 20, "total_tokens": 120.5},
    "absurd": {"prompt_tokens": 10**18, "completion_tokens": 20, "total_tokens": 10**18 + 20},
    "cached-over-input": {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "total_tokens": 120,
        "prompt_tokens_details": {"cached_tokens": 500},
    },
    "reasoning-over-output": {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "total_tokens": 120,
        "completion_tokens_details": {"reasoning_tokens": 21},
    },
    "total-disagrees": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 7},
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
@pytest.mark.parametrize("shared", [False, True], ids=["in-process", "shared"])
def test_item_1_hostile_usage_fails_that_answer_and_leaves_the_budget_untouched(
    server: WireServer, kind: str, shared: bool
) -> None:
    budget = Budget(max_total_tokens=10**6, max_cost_usd=Decimal(100))
    tracker = SharedBudgetTracker(budget, name=f"hostile-{kind}") if shared else BudgetTracker(budget)
    server.push(Answer.json(200, recorded.chat_completion(MODEL, HOSTILE[kind])))

    with pytest.raises(LLMUsageError, match="usage") as caught:
        _client(server, budget=tracker).complete("openai:gpt-4o-mini", "hi", max_tokens=50)

    assert caught.value.provider == "openai"
    spent = tracker.snapshot()
    assert (spent.input_tokens, spent.output_tokens, spent.total_tokens) == (0, 0, 0)
    assert spent.cost_usd == 0
    assert len(server.received) == 1, "an impossible usage is not retried: the provider may have charged for it"


def test_item_1_a_batch_row_with_hostile_usage_fails_in_place(server: WireServer) -> None:
    tracker = BudgetTracker(Budget(max_total_tokens=10**6))
    for usage in (GOOD, HOSTILE["negative"], GOOD):
        server.push(Answer.json(200, recorded.chat_completion(MODEL, usage)))
    rows = [{"model": "openai:gpt-4o-mini", "prompt": f"q{i}", "max_tokens": 50} for i in range(3)]

    results = llmplex.batch(rows, concurrency=1, client=_client(server, budget=tracker))

    first, middle, last = results
    assert isinstance(first, Response)
    assert isinstance(last, Response)
    assert isinstance(middle, LLMUsageError)
    assert first.usage.total_tokens == last.usage.total_tokens == 120
    assert tracker.snapshot().total_tokens == 240  # the neighbours, and nothing of the failed row


# -- missing usage -------------------------------------------------------------------------


@pytest.mark.parametrize("shared", [False, True], ids=["in-process", "shared"])
def test_item_1_missing_usage_is_unknown_and_the_budget_counts_its_reservation(
    server: WireServer, shared: bool
) -> None:
    budget = Budget(max_total_tokens=10**6, max_cost_usd=Decimal(100))
    tracker = SharedBudgetTracker(budget, name="missing") if shared else BudgetTracker(budget)
    observed = Observed()
    server.push(Answer.json(200, recorded.chat_completion(MODEL, usage=None)))

    response = _client(server, budget=tracker, plugins=[observed]).complete(
        "openai:gpt-4o-mini", "word " * 400, max_tokens=50
    )

    usage = response.usage
    assert not usage.reported
    assert usage.cost_usd is None
    assert usage.cost_note is not None
    assert "reported no usage" in usage.cost_note
    spent = tracker.snapshot()
    # the reservation: 2000 characters of prompt at 4 per token, and max_tokens
    assert (spent.input_tokens, spent.output_tokens, spent.total_tokens) == (500, 50, 550)
    # 500 input and 50 output tokens of gpt-4o-mini at $0.15 and $0.60 per million (openai.com/api/pricing)
    assert spent.cost_usd == (500 * Decimal("0.15") + 50 * Decimal("0.60")) / 1_000_000
    (event,) = [e for e in observed.events if isinstance(e, UsageUnknown)]
    assert "reported no usage" in event.reason
    assert event.counted[0]["total_tokens"] == 550
    assert event.counted[0]["estimated"] is True


def test_item_1_missing_usage_without_a_budget_is_unknown_not_zero(server: WireServer) -> None:
    server.push(Answer.json(200, recorded.chat_completion(MODEL, usage=None)))
    usage = _client(server).complete("openai:gpt-4o-mini", "hi").usage
    assert not usage.reported
    assert usage.cost_usd is None
    assert (usage + Usage(input_tokens=5)).cost_usd is None  # a sum holding an unknown part is unknown
    assert not (usage + Usage(input_tokens=5)).reported


def test_item_1_the_usage_line_says_unknown_usage_is_unknown() -> None:
    from llmplex.cli.usage_line import usage_line

    assert usage_line(Usage.unreported(), None) == "tokens: unknown (the provider reported no usage); cost: unknown"
    assert usage_line(Usage(input_tokens=3, output_tokens=3), None).startswith("tokens: 3 input, 3 output, 6 total")


def test_item_1_a_stream_reporting_hostile_usage_fails_and_counts_nothing(server: WireServer) -> None:
    tracker = BudgetTracker(Budget(max_total_tokens=10**6))
    server.push(Answer.stream(recorded.chat_stream(MODEL, HOSTILE["cached-over-input"])))

    with pytest.raises(LLMUsageError, match="cached_tokens"):
        list(_client(server, budget=tracker).stream("openai:gpt-4o-mini", "hi", max_tokens=50))

    assert tracker.snapshot().total_tokens == 0


@settings(deadline=None)  # the first example loads the price data
@given(
    uncached=st.integers(0, 60_000),
    cached=st.integers(0, 60_000),
    written=st.integers(0, 60_000),
    visible=st.integers(0, 10**9),
    reasoning=st.integers(0, 10**9),
)
def test_item_1_any_valid_usage_prices_each_token_once(
    uncached: int, cached: int, written: int, visible: int, reasoning: int
) -> None:
    usage = Usage(
        input_tokens=uncached + cached + written,
        output_tokens=visible + reasoning,
        cached_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=reasoning,
    )
    # claude-sonnet-4-5 (anthropic.com/pricing, 2026-11-26): input 3, cache read 0.30, cache write 3.75, output 15
    # (prompts stay under the 200k-token long-context tier)
    rates = uncached * Decimal(3) + cached * Decimal("0.30") + written * Decimal("3.75")
    assert usage.priced("anthropic", "claude-sonnet-4-5").cost_usd == (rates + (visible + reasoning) * 15) / 1_000_000


def test_item_1_missing_usage_of_an_unbounded_answer_counts_at_least_its_prompt(server: WireServer) -> None:
    tracker = BudgetTracker(Budget(max_cost_usd=Decimal(100)))
    server.push(Answer.json(200, recorded.chat_completion(MODEL, usage=None)))

    _client(server, budget=tracker).complete("openai:gpt-4o-mini", "word " * 400)  # no max_tokens: no output bound

    # 500 input tokens reserved (2000 characters) at gpt-4o-mini's $0.15 per million (openai.com/api/pricing)
    assert tracker.snapshot().cost_usd == 500 * Decimal("0.15") / 1_000_000
