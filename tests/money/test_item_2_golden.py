"""Issue 21 items 2 and 3, golden: each shipped provider's recorded answer, whole and streamed, priced by hand.

Each answer (``tests.money.recorded``: shaped as the provider documents it, with
cache reads or writes and reasoning tokens) is served by a local server to the real
plugin; its usage must come back in the right buckets and its cost must equal a
figure computed in ``tests.money.golden`` from the published per-token price, streamed or not.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import genai_prices
import pytest

import llmplex
from llmplex.testing.server import Answer, WireServer
from tests.money.golden import (
    GEMINI_2_5_FLASH,
    GOLDEN,
    GPT_5_MINI,
    O4_MINI,
    SONNET_4_5,
    client_for,
    server,
)

__all__ = ["server"]


def _counts(usage: llmplex.Usage) -> dict[str, int]:
    return {name: getattr(usage, name) for name in GOLDEN["openai-chat"].usage}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_item_2_recorded_answer_costs_what_the_published_price_says(server: WireServer, name: str) -> None:
    case = GOLDEN[name]
    server.push(Answer.json(200, case.whole))
    usage = client_for(case, server.url).complete(case.spec, "Capital of France?").usage

    assert _counts(usage) == case.usage
    assert usage.reported
    assert usage.cost_usd == case.cost, (usage.cost_usd, case.cost)
    assert usage.cost_note is None


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_item_3_recorded_stream_counts_and_costs_like_the_whole_answer(server: WireServer, name: str) -> None:
    case = GOLDEN[name]
    llm = client_for(case, server.url)
    server.push(Answer.json(200, case.whole))
    whole = llm.complete(case.spec, "Capital of France?")
    server.push(Answer.stream(case.stream))
    events = list(llm.stream(case.spec, "Capital of France?"))
    streamed = events[-1].response

    assert streamed is not None
    assert streamed.text == whole.text == "Paris."
    assert _counts(streamed.usage) == _counts(whole.usage) == case.usage
    assert streamed.usage.cost_usd == whole.usage.cost_usd == case.cost
    if name != "litellm":  # LiteLLM's stream chunks name the model as asked (o4-mini), its answers the snapshot
        assert streamed.model == whole.model


def test_item_3_openai_chat_streams_ask_for_their_usage(server: WireServer) -> None:
    case = GOLDEN["openai-chat"]
    server.push(Answer.stream(case.stream))
    list(client_for(case, server.url).stream(case.spec, "Capital of France?"))

    (sent,) = server.received
    assert sent.json()["stream"] is True
    assert sent.json()["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize(
    ("model", "prices"),
    [
        (("openai", "o4-mini"), O4_MINI),
        (("openai", "gpt-5-mini"), GPT_5_MINI),
        (("anthropic", "claude-sonnet-4-5"), SONNET_4_5),
        (("google", "gemini-2.5-flash"), GEMINI_2_5_FLASH),
    ],
)
def test_item_2_price_literals_are_genai_prices_own(model: tuple[str, str], prices: dict[str, Decimal]) -> None:
    provider, name = model
    price = genai_prices.calc_price(genai_prices.Usage(input_tokens=1), name, provider_id=provider).model_price

    def base(value: Any) -> Any:  # a tiered price (Anthropic's long-context tier) starts at its base
        return getattr(value, "base", value)

    assert base(price.input_mtok) == prices["input"]
    assert base(price.output_mtok) == prices["output"]
    assert base(price.cache_read_mtok) == prices["cache_read"]
    assert base(price.cache_write_mtok) == prices.get("cache_write")
