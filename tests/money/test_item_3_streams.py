"""Issue 21 item 3: a stream cut off or abandoned mid-way still settles the budget, with what it reported or,
where more, what was reserved; and says so in an event."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from decimal import Decimal

import pytest

import llmplex
from llmplex import Budget, BudgetTracker, LLMError, SharedBudgetTracker, Usage, UsageUnknown
from llmplex.reliability.budget import charge
from llmplex.reliability.estimate import Estimate
from llmplex.testing.observe import Observed
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer

PROMPT = "word " * 400  # 2000 characters: a reservation of 500 input tokens
MAX_TOKENS = 50
USAGE = fx.TokenUsage(480, 40, 0, 0)


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer(Fault.ok("one two three four", usage=USAGE)) as running:
        yield running


def _tracker(shared: bool, name: str) -> BudgetTracker:
    budget = Budget(max_total_tokens=10**6, max_cost_usd=Decimal(10))
    return SharedBudgetTracker(budget, name=name) if shared else BudgetTracker(budget)


def _client(server: FaultServer, tracker: BudgetTracker, observed: Observed) -> llmplex.Client:
    settings = {"api": "chat", "api_key": "sk-test-money", "base_url": server.url}
    return llmplex.Client(
        providers={"openai": settings}, throttle={"max_attempts": 1}, budget=tracker, plugins=[observed]
    )


def _reserved_cost() -> Decimal:
    # 500 input and 50 output tokens of gpt-4o-mini at $0.15 and $0.60 per million (openai.com/api/pricing)
    return (500 * Decimal("0.15") + MAX_TOKENS * Decimal("0.60")) / 1_000_000


def _assert_settled_at_the_reservation(tracker: BudgetTracker, observed: Observed, why: str) -> None:
    spent = tracker.snapshot()
    assert (spent.input_tokens, spent.output_tokens, spent.total_tokens, spent.requests) == (500, 50, 550, 1)
    assert spent.cost_usd == _reserved_cost()
    (event,) = [e for e in observed.events if isinstance(e, UsageUnknown)]
    assert why in event.reason
    assert event.counted[0]["total_tokens"] == 550


@pytest.mark.parametrize("shared", [False, True], ids=["in-process", "shared"])
def test_item_3_a_stream_cut_off_mid_way_settles_the_budget_at_its_reservation(
    server: FaultServer, shared: bool
) -> None:
    tracker, observed = _tracker(shared, "cut"), Observed()
    server.enqueue(Fault.stream_cut(after_events=2))

    with pytest.raises(LLMError):
        list(_client(server, tracker, observed).stream("openai:gpt-4o-mini", PROMPT, max_tokens=MAX_TOKENS))

    _assert_settled_at_the_reservation(tracker, observed, "cut off")


@pytest.mark.parametrize("shared", [False, True], ids=["in-process", "shared"])
def test_item_3_an_abandoned_stream_settles_the_budget_at_its_reservation(server: FaultServer, shared: bool) -> None:
    tracker, observed = _tracker(shared, "abandoned"), Observed()
    stream = _client(server, tracker, observed).stream("openai:gpt-4o-mini", PROMPT, max_tokens=MAX_TOKENS)

    first = next(iter(stream))
    assert first.type == "text"
    stream.close()  # type: ignore[attr-defined]

    _assert_settled_at_the_reservation(tracker, observed, "abandoned")


def test_item_3_an_abandoned_async_stream_settles_the_budget_too(server: FaultServer) -> None:
    tracker, observed = _tracker(False, "abandoned-async"), Observed()
    llm = _client(server, tracker, observed)

    async def run() -> None:
        stream = llm.astream("openai:gpt-4o-mini", PROMPT, max_tokens=MAX_TOKENS)
        async for event in stream:
            assert event.type == "text"
            break
        await stream.aclose()  # type: ignore[attr-defined]

    asyncio.run(run())
    _assert_settled_at_the_reservation(tracker, observed, "abandoned")


def test_item_3_a_stream_read_to_the_end_counts_its_reported_usage_only(server: FaultServer) -> None:
    tracker, observed = _tracker(False, "whole"), Observed()
    events = list(_client(server, tracker, observed).stream("openai:gpt-4o-mini", PROMPT, max_tokens=MAX_TOKENS))

    assert events[-1].response is not None
    assert events[-1].response.usage.total_tokens == 520
    assert tracker.snapshot().total_tokens == 520
    assert not [e for e in observed.events if isinstance(e, UsageUnknown)]


def test_item_3_a_refused_stream_spends_nothing(server: FaultServer) -> None:
    tracker, observed = _tracker(False, "refused"), Observed()
    server.enqueue(Fault.server_error(400))

    with pytest.raises(LLMError):
        list(_client(server, tracker, observed).stream("openai:gpt-4o-mini", PROMPT, max_tokens=MAX_TOKENS))

    assert tracker.snapshot().total_tokens == 0
    assert not [e for e in observed.events if isinstance(e, UsageUnknown)]


def test_item_3_what_a_cut_stream_reported_counts_where_it_is_more_than_the_reservation() -> None:
    budget = Budget(max_total_tokens=10**6)
    partial = Usage(input_tokens=4200, output_tokens=3, reported=False)  # a Gemini chunk: the prompt, 3 tokens so far
    counted = charge(budget, partial, Estimate(input_tokens=500, output_tokens=50))
    assert (counted.input_tokens, counted.output_tokens, counted.total_tokens) == (4200, 50, 4250)
    assert counted.estimated
    unbounded = charge(budget, Usage.unreported(), Estimate(input_tokens=500, output_tokens=None))
    assert (unbounded.input_tokens, unbounded.output_tokens) == (500, 0)
