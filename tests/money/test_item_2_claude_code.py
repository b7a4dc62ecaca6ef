"""Issue 21 items 2 and 3, golden for the claude-code plugin: the CLI's recorded result (tests/plugins/claude_code/
fake_claude.py, recorded from Claude Code 2.1.197), whole and streamed, priced by hand."""

from __future__ import annotations

from decimal import Decimal

import llmplex
from tests.plugins.claude_code.conftest import FakeCLI, fake_cli, llm

__all__ = ["fake_cli", "llm"]

# claude-sonnet-4-5, US dollars per million tokens (anthropic.com/pricing, read 2026-11-26; genai-prices 0.2.3
# agrees, see test_item_2_golden): input 3, cache read 0.30, output 15. The CLI's result reports 12 input tokens,
# 3 read from the cache and 5 output tokens.
BY_HAND = (12 * Decimal(3) + 3 * Decimal("0.30") + 5 * Decimal(15)) / 1_000_000


def test_item_2_claude_code_result_costs_what_the_published_price_says(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    usage = llm.complete("claude-code:sonnet", "hi").usage

    assert (usage.input_tokens, usage.cached_tokens, usage.output_tokens) == (15, 3, 5)
    assert usage.cost_usd == BY_HAND


def test_item_3_claude_code_stream_counts_and_costs_like_the_whole_answer(
    llm: llmplex.Client, fake_cli: FakeCLI
) -> None:
    whole = llm.complete("claude-code:sonnet", "hi")
    streamed = list(llm.stream("claude-code:sonnet", "hi"))[-1].response

    assert streamed is not None
    assert streamed.usage == whole.usage
    assert streamed.model == whole.model == "claude-sonnet-4-5-20250929"
    assert streamed.usage.cost_usd == whole.usage.cost_usd == BY_HAND
