"""Budgets: caps checked before each request, real usage recorded after each answer, shared safely."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

import llmplex
from llmplex import Budget, BudgetSnapshot, BudgetTracker, LLMBudgetExceededError, LLMConfigurationError
from llmplex.providers.mock import MockBackend
from llmplex.reliability.budget import Reservation
from llmplex.reliability.estimate import Estimate
from tests.reliability.fakes import FakeTime


def test_tracker_reserves_until_a_cap_is_reached_and_settles_to_usage() -> None:
    tracker = BudgetTracker(Budget(max_total_tokens=10))
    held = tracker.try_reserve(Estimate(input_tokens=2, output_tokens=3))
    assert isinstance(held, Reservation)
    held.settle(llmplex.Usage(input_tokens=6, output_tokens=4))
    assert tracker.snapshot() == BudgetSnapshot(input_tokens=6, output_tokens=4, total_tokens=10, requests=1)
    with pytest.raises(LLMBudgetExceededError, match=r"10 total tokens used, max_total_tokens=10") as info:
        tracker.try_reserve(Estimate(input_tokens=0, output_tokens=0), "mock", "m")
    snapshot = {"input_tokens": 6, "output_tokens": 4, "total_tokens": 10, "requests": 1, "cost_usd": 0}
    assert info.value.snapshot == snapshot
    assert (info.value.provider, info.value.attempts, info.value.retryable) == ("mock", 0, False)
    assert tracker.snapshot().requests == 1  # a refused request is not counted


@pytest.mark.parametrize(
    ("budget", "usage", "cap"),
    [
        (Budget(max_input_tokens=5), {"input_tokens": 5, "output_tokens": 0}, "max_input_tokens=5"),
        (Budget(max_output_tokens=3), {"input_tokens": 0, "output_tokens": 3}, "max_output_tokens=3"),
        (Budget(max_total_tokens=7), {"input_tokens": 3, "output_tokens": 4}, "max_total_tokens=7"),
        (Budget(max_requests=1), {"input_tokens": 1, "output_tokens": 1}, "max_requests=1"),
    ],
)
def test_a_request_over_budget_fails_before_it_is_sent(
    client: llmplex.Client, mock_backend: MockBackend, budget: Budget, usage: dict[str, int], cap: str
) -> None:
    tracker = BudgetTracker(budget)
    mock_backend.push("first", usage=usage)
    assert client.complete("mock:m", "x", budget=tracker).text == "first"
    with pytest.raises(LLMBudgetExceededError, match=cap):
        client.complete("mock:m", "x", budget=tracker)
    assert len(mock_backend.calls) == 1


def test_max_requests_counts_retries_and_an_exhausted_budget_stops_them() -> None:
    time = FakeTime()
    client = llmplex.Client(clock=time.clock())
    backend = client.provider_client("mock")
    for _ in range(3):
        backend.push_error(llmplex.LLMServerError("503"))
    tracker = BudgetTracker(Budget(max_requests=2))
    with pytest.raises(LLMBudgetExceededError) as info:
        client.complete("mock:m", "x", budget=tracker)
    assert len(backend.calls) == 2 and info.value.attempts == 2
    assert [type(f.error).__name__ for f in info.value.context["errors"]] == [
        "LLMServerError", "LLMServerError", "LLMBudgetExceededError",
    ]  # fmt: skip


def test_streams_and_async_calls_record_their_usage(client: llmplex.Client) -> None:
    tracker = BudgetTracker()
    list(client.stream("mock:m", "one two", budget=tracker))
    asyncio.run(client.acomplete("mock:m", "three", budget=tracker))
    asyncio.run(_drain(client, tracker))
    assert tracker.snapshot() == BudgetSnapshot(input_tokens=4, output_tokens=4, total_tokens=8, requests=3)


async def _drain(client: llmplex.Client, tracker: BudgetTracker) -> None:
    async for _ in client.astream("mock:m", "four", budget=tracker):
        pass


def test_one_tracker_shared_by_many_threads_is_exact() -> None:
    client = llmplex.Client()
    tracker = BudgetTracker(Budget(max_requests=50))

    def call(index: int) -> llmplex.Response | llmplex.LLMError:
        try:
            return client.complete("mock:m", f"word{index} more", budget=tracker)
        except llmplex.LLMError as error:
            return error

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(call, range(200)))
    answers = [r for r in results if isinstance(r, llmplex.Response)]
    refused = [r for r in results if isinstance(r, LLMBudgetExceededError)]
    assert (len(answers), len(refused)) == (50, 150)
    assert tracker.snapshot() == BudgetSnapshot(input_tokens=100, output_tokens=100, total_tokens=200, requests=50)


async def test_one_tracker_shared_by_many_tasks_records_every_answer() -> None:
    client = llmplex.Client()
    tracker = BudgetTracker()
    responses = await asyncio.gather(*(client.acomplete("mock:m", "a b c", budget=tracker) for _ in range(300)))
    total = sum(r.usage.total_tokens for r in responses)
    assert tracker.snapshot() == BudgetSnapshot(input_tokens=900, output_tokens=900, total_tokens=total, requests=300)


def test_client_budget_caps_every_call() -> None:
    tracker = BudgetTracker(Budget(max_requests=1))
    client = llmplex.Client(budget=tracker)
    client.complete("mock:m", "x")
    with pytest.raises(LLMBudgetExceededError):
        client.complete("mock:m", "x")
    assert llmplex.Client(budget={"max_requests": 3}).calls.budget.budget == Budget(max_requests=3)  # type: ignore[union-attr]


def test_config_budget_table_caps_the_client() -> None:
    client = llmplex.Client({"budget": {"max_output_tokens": 2}})
    assert client.calls.budget is not None
    client.complete("mock:m", "one two")
    with pytest.raises(LLMBudgetExceededError, match="max_output_tokens=2"):
        client.complete("mock:m", "x")
    assert client.calls.budget.snapshot().output_tokens == 2


def test_a_call_budget_adds_to_the_client_budget() -> None:
    shared = BudgetTracker()
    client = llmplex.Client(budget=shared)
    with pytest.raises(LLMBudgetExceededError, match="max_requests=0"):
        client.complete("mock:m", "x", budget=Budget(max_requests=0))
    client.complete("mock:m", "a b", budget=Budget(max_requests=1))
    assert shared.snapshot().requests == 1 and shared.snapshot().total_tokens == 4


def test_bad_budgets_are_configuration_errors(client: llmplex.Client) -> None:
    with pytest.raises(LLMConfigurationError, match="budget max_total_tokens must be a whole number >= 0"):
        Budget(max_total_tokens=-1)
    with pytest.raises(LLMConfigurationError, match="budget max_requests"):
        Budget(max_requests=1.5)  # type: ignore[arg-type]
    with pytest.raises(LLMConfigurationError, match=r"budget must be an llmplex\.Budget, an llmplex\.BudgetTracker or"):
        client.complete("mock:m", "x", budget=100)  # type: ignore[typeddict-item]
    with pytest.raises(LLMConfigurationError, match="unknown budget setting 'tokens'; valid settings: max_input"):
        client.complete("mock:m", "x", budget={"tokens": 1})  # type: ignore[typeddict-item]
    with pytest.raises(LLMConfigurationError, match=r"key 'budget\.max_requests'"):
        llmplex.Client({"budget": {"max_requests": -1}})
