"""Conformance checks of what an answer counts: a stream counts and costs what the same answer whole does."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from llmplex.client import Client
from llmplex.reliability.budget import Budget, BudgetTracker
from llmplex.testing.kit_base import DETAILED_USAGE, KitBase

__all__ = ["MoneyChecks"]

SNAPSHOT_SUFFIX = "-2026-01-01"
"""Appended to the kit's model in answers: providers answer with a dated snapshot of the model asked for."""


class MoneyChecks(KitBase):
    """Usage, cost and budgets, streamed and not."""

    def test_stream_counts_like_the_whole_answer(self, llm: Client, transport: Any) -> None:
        """A streamed answer reports the same usage, model and cost as the same answer whole, and a budget
        counts the same tokens for each."""
        reply = replace(self.reply("one two three", usage=DETAILED_USAGE), model=self.model + SNAPSHOT_SUFFIX)
        tracker = BudgetTracker(Budget(max_total_tokens=10**9))
        self.fake_response(transport, reply)
        whole = llm.complete(self.spec, "Count", budget=tracker)
        counted_whole = tracker.snapshot().total_tokens
        self.fake_stream(transport, reply)
        streamed = list(llm.stream(self.spec, "Count", budget=tracker))[-1].response
        assert streamed is not None
        counted_stream = tracker.snapshot().total_tokens - counted_whole

        assert streamed.usage.reported, (
            "a streamed answer must report its usage (ask the provider for it on streams, e.g. OpenAI's "
            "stream_options.include_usage): unknown usage is counted at the budget's estimate"
        )
        assert streamed.usage == whole.usage, f"streamed usage {streamed.usage} != whole {whole.usage}"
        assert streamed.model == whole.model, (
            f"a stream must name the model that answered, as the whole answer does ({whole.model!r}), "
            f"not {streamed.model!r}: the price depends on it"
        )
        assert (streamed.usage.cost_usd, streamed.usage.cost_note) == (whole.usage.cost_usd, whole.usage.cost_note)
        assert counted_stream == counted_whole == whole.usage.total_tokens, (
            f"a budget must count a stream ({counted_stream} tokens) as the whole answer ({counted_whole})"
        )
