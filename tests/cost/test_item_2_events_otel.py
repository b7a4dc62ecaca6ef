"""Issue 16 item 2: the PromptExecuted event and the OpenTelemetry spans carry the answer's cost."""

from __future__ import annotations

import logging

import genai_prices
import pytest
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai

import llmplex
from tests.contract import fixtures_openai as fx
from tests.plugins.openai.conftest import FakeAPI
from tests.plugins.otel.test_otel import Telemetry, otel

__all__ = ["otel"]

PRICE = genai_prices.calc_price(
    genai_prices.Usage(input_tokens=1200, cache_read_tokens=1024, output_tokens=340, output_reasoning_tokens=40),
    fx.MODEL,
    provider_id="openai",
).total_price


def _answer(openai_api: FakeAPI) -> llmplex.Response:
    openai_api.reply("/chat/completions", fx.chat_completion("Hi", usage=fx.TokenUsage(1200, 340, 1024, 40)))
    llm = llmplex.Client(providers={"openai": {"api": "chat"}}, throttle={"max_attempts": 1})
    return llm.complete("openai:gpt-4o-mini", "hi")


def test_item_2_spans_carry_cost_and_every_token_class(otel: Telemetry, openai_api: FakeAPI) -> None:
    _answer(openai_api)

    (request,) = otel.named("chat ")
    (attempt,) = otel.named("attempt ")
    for span in (request, attempt):
        attributes = dict(span.attributes or {})
        assert attributes["llmplex.usage.cost_usd"] == float(PRICE)
        assert attributes[gen_ai.GEN_AI_USAGE_INPUT_TOKENS] == 1200
        assert attributes[gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS] == 340
        assert attributes[gen_ai.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 1024
        assert attributes[gen_ai.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] == 40


def test_item_2_unpriced_answers_leave_the_cost_attribute_out(otel: Telemetry) -> None:
    llmplex.Client().complete("mock:echo", "hi")
    (request,) = otel.named("chat ")
    assert "llmplex.usage.cost_usd" not in (request.attributes or {})


def test_item_2_prompt_executed_event_and_its_log_record_carry_the_cost(
    openai_api: FakeAPI, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="llmplex"):
        response = _answer(openai_api)

    (record,) = [r for r in caplog.records if r.getMessage() == "prompt.call.end"]
    fields = record.llmplex  # type: ignore[attr-defined]
    assert fields["usage"]["cost_usd"] == PRICE == response.usage.cost_usd
    assert fields["usage"]["cached_tokens"] == 1024
