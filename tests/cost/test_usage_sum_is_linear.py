"""Summing N usages is linear: each ``+`` keeps its two operands, not a copy of every part added so far.

A sum used to flatten the parts of both operands into a new tuple (reading two pydantic private
attributes per part), so adding the 10,000th usage copied 10,000 parts: summing a large batch was
quadratic. What one ``+`` allocates is measured, not timed: it must not grow with the size of the sum.
"""

from __future__ import annotations

import sys
import tracemalloc
from decimal import Decimal

from llmplex import Usage


def _allocated_by_one_more_add(total: Usage, one: Usage) -> int:
    tracemalloc.start()
    try:
        _ = total + one
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_adding_to_a_large_sum_allocates_no_more_than_adding_to_a_small_one() -> None:
    one = Usage(input_tokens=1000, output_tokens=100).priced("openai", "gpt-4o-mini")
    small = sum([one] * 10, Usage())
    large = sum([one] * 1_000, Usage())
    # flattening copied 3,000 part references (24 kB) per add; keeping the operands allocates the same either way
    assert _allocated_by_one_more_add(large, one) < _allocated_by_one_more_add(small, one) + 4096


def test_a_sum_of_many_priced_usages_keeps_every_token_and_cent() -> None:
    openai = Usage(input_tokens=1000, output_tokens=100, cached_tokens=200).priced("openai", "gpt-4o-mini")
    anthropic = Usage(input_tokens=2000, output_tokens=50, cache_write_tokens=300).priced(
        "anthropic", "claude-sonnet-4-5"
    )
    usages = [openai, anthropic] * 1_000
    total = sum(usages, Usage())
    assert total.input_tokens == 3_000_000 and total.output_tokens == 150_000
    assert total.cached_tokens == 200_000 and total.cache_write_tokens == 300_000
    assert openai.cost_usd is not None and anthropic.cost_usd is not None
    # deeper than the recursion limit: the walk over the parts is iterative
    assert len(usages) > sys.getrecursionlimit()
    assert total.cost_usd == 1_000 * (openai.cost_usd + anthropic.cost_usd)
    # grouping differently gives the same figures: addition stays associative
    halves = sum(usages[:1_000], Usage()) + sum(usages[1_000:], Usage())
    assert halves == total and halves.cost_usd == total.cost_usd


def test_one_unpriced_usage_with_tokens_makes_a_large_sum_unpriced() -> None:
    one = Usage(input_tokens=10).priced("openai", "gpt-4o-mini")
    total = sum([one] * 1_000, Usage()) + Usage(input_tokens=5) + sum([one] * 1_000, Usage())
    assert total.cost_usd is None
    assert sum([one] * 1_000, Usage() + Usage()).cost_usd == 1_000 * (one.cost_usd or Decimal(0))
