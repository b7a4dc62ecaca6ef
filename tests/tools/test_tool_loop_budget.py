"""A per-call budget caps the whole tool loop, not each round."""

from __future__ import annotations

import pytest

import llmplex


def lookup(query: str) -> str:
    """Look something up.

    Args:
        query: what to look up.
    """
    return f"found {query}"


def test_a_budget_mapping_is_shared_by_every_round_of_the_tool_loop(client: llmplex.Client) -> None:
    backend = client.provider_client("mock")
    for _ in range(3):
        backend.push(
            tool_calls=[{"name": "lookup", "arguments": '{"query": "x"}'}],
            usage={"input_tokens": 5, "output_tokens": 5},
        )
    backend.push("done", usage={"input_tokens": 5, "output_tokens": 5})
    with pytest.raises(llmplex.LLMBudgetExceededError):
        client.complete("mock:m", "look it up", tools=[lookup], budget={"max_total_tokens": 15})
    assert len(backend.calls) == 2  # the third round would start over budget, so it is never sent
