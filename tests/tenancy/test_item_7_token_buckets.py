"""Issue 31 item 7: every token bucket a provider reports is priced at its own rate, whole and streamed, in
``Response.cost_usd`` and in the gateway's spend rows; a bucket with no known price is named in ``cost_note``.

Each answer is shaped as the provider documents it and served by a local server to the real plugin; each
cost is computed by hand from the published rate of every bucket (and checked against genai-prices' own).
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import genai_prices
import httpx
import llmplex_anthropic.hooks  # noqa: F401 - the SDK's import (seconds on a loaded machine) is not the gateway's start
import pytest
from llmplex_openai.usage import core_usage

import llmplex
from llmplex.errors import LLMUsageError
from llmplex.gateway.spend.log import request_row
from llmplex.testing.server import Answer, WireServer
from tests.gateway.harness import MASTER_KEY, Gateway, running_gateway
from tests.money.recorded import chat_completion, chat_stream, sse

M = Decimal(1_000_000)
Json = dict[str, Any]

# US dollars per million tokens as published (anthropic.com/pricing, openai.com/api/pricing,
# ai.google.dev/gemini-api/docs/pricing) and as genai-prices has them (test_item_7_rates_are_genai_prices_own)
SONNET = {"input": "3", "cache_read": "0.30", "cache_write": "3.75", "cache_write_1h": "6", "output": "15"}
GPT_AUDIO = {"input": "2.50", "input_audio": "32", "output": "10", "output_audio": "64"}
GPT_REALTIME = {"input": "4", "cache_read": "0.40", "input_audio": "32", "cache_audio_read": "0.40", "output": "16"}
FLASH = {"input": "0.30", "cache_read": "0.03", "input_audio": "1", "cache_audio_read": "0.1", "output": "2.50"}


def _cost(rates: dict[str, str], **tokens: int) -> Decimal:
    return sum((count * Decimal(rates[bucket]) for bucket, count in tokens.items()), Decimal(0)) / M


# -- Anthropic: 5-minute and 1-hour cache writes (docs.anthropic.com/en/api/messages, usage.cache_creation) ------

ANTHROPIC_USAGE: Json = {
    "input_tokens": 50,
    "cache_read_input_tokens": 3000,
    "cache_creation_input_tokens": 1700,
    "cache_creation": {"ephemeral_5m_input_tokens": 1200, "ephemeral_1h_input_tokens": 500},
    "output_tokens": 400,
    "service_tier": "standard",
}
SONNET_COST = _cost(SONNET, input=50, cache_read=3000, cache_write=1200, cache_write_1h=500, output=400)


def anthropic_message(model: str = "claude-sonnet-4-5-20250929", usage: Json = ANTHROPIC_USAGE) -> Json:
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "Paris."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def anthropic_stream(model: str = "claude-sonnet-4-5-20250929", usage: Json = ANTHROPIC_USAGE) -> list[bytes]:
    """The same answer streamed: the cache writes by lifetime come only in ``message_start``; the final
    ``message_delta`` repeats the totals without the breakdown (as the API sends them)."""
    whole = anthropic_message(model, usage)
    start = {**whole, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    final = {key: usage[key] for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")}
    events: list[Json] = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Paris."}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {**final, "output_tokens": usage["output_tokens"]},
        },
        {"type": "message_stop"},
    ]
    return [sse(event, str(event["type"])) for event in events]


# -- OpenAI: audio in and out (platform.openai.com/docs/api-reference/chat/object, usage details) -----------------

AUDIO_USAGE: Json = {
    "prompt_tokens": 1000,
    "completion_tokens": 300,
    "total_tokens": 1300,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 600},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 200},
}
GPT_AUDIO_COST = _cost(GPT_AUDIO, input=400, input_audio=600, output=100, output_audio=200)

# -- Gemini: tool-use prompts, thoughts, audio (ai.google.dev/api/generate-content#UsageMetadata) -----------------

GEMINI_USAGE: Json = {
    "promptTokenCount": 4200,
    "cachedContentTokenCount": 1200,
    "toolUsePromptTokenCount": 300,
    "candidatesTokenCount": 60,
    "thoughtsTokenCount": 380,
    "totalTokenCount": 4940,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 3500}, {"modality": "AUDIO", "tokenCount": 700}],
    "cacheTokensDetails": [{"modality": "TEXT", "tokenCount": 1000}, {"modality": "AUDIO", "tokenCount": 200}],
    "toolUsePromptTokensDetails": [{"modality": "TEXT", "tokenCount": 300}],
}
# uncached text 2500 + tool-use prompts 300 at the input rate, 1000 text and 200 audio cache reads, 500 uncached
# audio, 60 answer tokens and 380 thoughts at the output rate (Google bills thinking as output)
FLASH_COST = _cost(FLASH, input=2800, cache_read=1000, cache_audio_read=200, input_audio=500, output=440)


def gemini_answer(text: str, usage: Json, finish: str | None = "STOP") -> Json:
    candidate: Json = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"}


GEMINI_STREAM = [
    sse(gemini_answer("Par", {**GEMINI_USAGE, "candidatesTokenCount": 2, "totalTokenCount": 4882}, finish=None)),
    sse(gemini_answer("is.", GEMINI_USAGE)),
]

CASES: dict[str, tuple[str, dict[str, Any], Answer, Answer, Decimal]] = {
    "anthropic-1h-cache-writes": (
        "anthropic:claude-sonnet-4-5",
        {"api_key": "sk-ant-test"},
        Answer.json(200, anthropic_message()),
        Answer.stream(anthropic_stream()),
        SONNET_COST,
    ),
    "openai-audio": (
        "openai:gpt-audio",
        {"api": "chat", "api_key": "sk-test", "base_path": "/v1"},
        Answer.json(200, chat_completion("gpt-audio-2025-08-28", AUDIO_USAGE)),
        Answer.stream(chat_stream("gpt-audio-2025-08-28", AUDIO_USAGE)),
        GPT_AUDIO_COST,
    ),
    "gemini-tool-prompts-thoughts-audio": (
        "gemini:gemini-2.5-flash",
        {"api_key": "AIzaSy-test"},
        Answer.json(200, gemini_answer("Paris.", GEMINI_USAGE)),
        Answer.stream(GEMINI_STREAM),
        FLASH_COST,
    ),
}


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


def _client(spec: str, settings: dict[str, Any], url: str) -> llmplex.Client:
    settings = dict(settings)
    base_path = settings.pop("base_path", "")
    prefix = spec.partition(":")[0]
    return llmplex.Client(providers={prefix: {**settings, "base_url": url + base_path}}, throttle={"max_attempts": 1})


@pytest.mark.parametrize("name", sorted(CASES))
def test_item_7_each_bucket_is_priced_at_its_own_rate_whole_and_streamed(server: WireServer, name: str) -> None:
    spec, settings, whole_answer, stream_answer, expected = CASES[name]
    llm = _client(spec, settings, server.url)
    server.push(whole_answer)
    whole = llm.complete(spec, "Capital of France?")
    server.push(stream_answer)
    streamed = list(llm.stream(spec, "Capital of France?"))[-1].response

    assert streamed is not None
    assert whole.usage.cost_usd == streamed.usage.cost_usd == expected, (whole.usage, streamed.usage)
    assert whole.usage.cost_note is None and streamed.usage.cost_note is None
    assert whole.usage == streamed.usage


def test_item_7_anthropic_buckets_land_where_they_are_priced(server: WireServer) -> None:
    server.push(Answer.json(200, anthropic_message()))
    usage = _client("anthropic:x", {"api_key": "k"}, server.url).complete("anthropic:claude-sonnet-4-5", "hi").usage
    assert (usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens, usage.cache_write_1h_tokens) == (
        4750,
        3000,
        1700,
        500,
    )
    # hostile: had the hour-long writes been priced at the 5-minute rate, the cost would be this much lower
    assert SONNET_COST - usage.cost_usd == 0 != 500 * (Decimal(SONNET["cache_write_1h"]) - Decimal("3.75")) / M


def test_item_7_gemini_reports_tool_prompts_thoughts_and_audio_apart(server: WireServer) -> None:
    server.push(Answer.json(200, gemini_answer("Paris.", GEMINI_USAGE)))
    usage = _client("gemini:x", {"api_key": "k"}, server.url).complete("gemini:gemini-2.5-flash", "hi").usage
    buckets = ("input_tokens", "tool_prompt_tokens", "input_audio_tokens", "cached_audio_tokens", "reasoning_tokens")
    assert {name: getattr(usage, name) for name in buckets} == {
        "input_tokens": 4500,
        "tool_prompt_tokens": 300,
        "input_audio_tokens": 700,
        "cached_audio_tokens": 200,
        "reasoning_tokens": 380,
    }
    assert usage.output_tokens == 440 and usage.total_tokens == 4940


def test_item_7_openai_cached_audio_is_priced_at_the_audio_cache_rate() -> None:
    # the Realtime API's shape: the audio among the cache reads, in cached_tokens_details
    usage = core_usage(
        {
            "input_tokens": 2000,
            "output_tokens": 100,
            "total_tokens": 2100,
            "input_tokens_details": {
                "cached_tokens": 1500,
                "audio_tokens": 1200,
                "cached_tokens_details": {"text_tokens": 500, "audio_tokens": 1000},
            },
            "output_tokens_details": {},
        }
    ).priced("openai", "gpt-realtime")
    assert (usage.cached_tokens, usage.input_audio_tokens, usage.cached_audio_tokens) == (1500, 1200, 1000)
    expected = _cost(GPT_REALTIME, input=300, cache_read=500, cache_audio_read=1000, input_audio=200, output=100)
    assert usage.cost_usd == expected and usage.cost_note is None


@pytest.mark.parametrize(
    ("usage", "plugin", "model", "named"),
    [
        (
            llmplex.Usage(input_tokens=900, cache_write_tokens=800, cache_write_1h_tokens=800),
            "anthropic",
            "claude-2",
            "1-hour cache writes (800)",
        ),
        (
            llmplex.Usage(input_tokens=900, output_tokens=9, input_audio_tokens=700),
            "openai",
            "gpt-4o-mini",
            "audio input tokens (700)",
        ),
        (
            llmplex.Usage(input_tokens=900, output_tokens=90, output_audio_tokens=90),
            "openai",
            "gpt-4o-mini",
            "audio output tokens (90)",
        ),
        (
            llmplex.Usage(input_tokens=900, cached_tokens=600, input_audio_tokens=600, cached_audio_tokens=600),
            "openai",
            "gpt-audio",
            "audio cache reads (600)",
        ),
    ],
    ids=["1h-writes", "audio-in", "audio-out", "cached-audio"],
)
def test_item_7_a_bucket_with_no_known_price_is_named_and_never_priced_at_another_rate(
    usage: llmplex.Usage, plugin: str, model: str, named: str
) -> None:
    priced = usage.priced(plugin, model)
    assert priced.cost_usd is None
    assert priced.cost_note is not None and named in priced.cost_note and model in priced.cost_note
    # a sum holding it is unknown too, never the priced parts alone
    total = priced + llmplex.Usage(input_tokens=5, output_tokens=5).priced("openai", "gpt-4o-mini")
    assert total.cost_usd is None and named in (total.cost_note or "")


@pytest.mark.parametrize(
    "counts",
    [
        {"input_tokens": 10, "cache_write_tokens": 5, "cache_write_1h_tokens": 6},
        {"input_tokens": 10, "input_audio_tokens": 11},
        {"input_tokens": 10, "cached_tokens": 2, "input_audio_tokens": 5, "cached_audio_tokens": 3},
        {"input_tokens": 10, "tool_prompt_tokens": 11},
        {"output_tokens": 10, "output_audio_tokens": 11},
    ],
)
def test_item_7_a_bucket_larger_than_what_holds_it_is_refused(counts: dict[str, int]) -> None:
    with pytest.raises(LLMUsageError, match="exceed"):
        llmplex.Usage(**counts)


def test_item_7_rates_are_genai_prices_own() -> None:
    keys = {
        "input": "input_mtok",
        "cache_read": "cache_read_mtok",
        "cache_write": "cache_write_mtok",
        "cache_write_1h": "cache_write_1h_mtok",
        "input_audio": "input_audio_mtok",
        "cache_audio_read": "cache_audio_read_mtok",
        "output": "output_mtok",
        "output_audio": "output_audio_mtok",
    }
    for provider, model, rates in (
        ("anthropic", "claude-sonnet-4-5", SONNET),
        ("openai", "gpt-audio", GPT_AUDIO),
        ("openai", "gpt-realtime", GPT_REALTIME),
        ("google", "gemini-2.5-flash", FLASH),
    ):
        prices = genai_prices.calc_price(genai_prices.Usage(), model, provider_id=provider).model_price
        for bucket, rate in rates.items():
            price = getattr(prices, keys[bucket])
            assert getattr(price, "base", price) == Decimal(rate), (model, bucket)


# -- the gateway's spend rows ---------------------------------------------------------------------------------------


def _messages(gateway: Gateway, stream: bool) -> httpx.Response:
    body = {"model": "anthropic:claude-sonnet-4-5", "max_tokens": 50, "stream": stream}
    body["messages"] = [{"role": "user", "content": "Capital of France?"}]
    return httpx.post(gateway.url + "/v1/messages", json=body, headers={"x-api-key": MASTER_KEY}, timeout=10)


def _wait_records(gateway: Gateway, count: int) -> list[Any]:
    import time

    deadline = time.monotonic() + 10
    while len(gateway.recorder.records) < count and time.monotonic() < deadline:
        time.sleep(0.005)  # a stream is recorded just after its last byte
    return gateway.recorder.records


def test_item_7_the_gateways_spend_rows_price_each_bucket_whole_and_streamed(server: WireServer) -> None:
    config = {
        "providers": {"anthropic": {"api_key": "sk-ant-test", "base_url": server.url}},
        "throttle": {"max_attempts": 1},
        "gateway": {"models": ["anthropic:claude-sonnet-4-5"]},
    }
    with running_gateway(config) as gateway:
        server.push(Answer.json(200, anthropic_message()))
        assert _messages(gateway, stream=False).status_code == 200
        server.push(Answer.stream(anthropic_stream()))
        streamed = _messages(gateway, stream=True)
        assert streamed.status_code == 200 and b"message_stop" in streamed.content
        whole_record, stream_record = _wait_records(gateway, 2)
    for record in (whole_record, stream_record):
        row = request_row(record)
        assert row["cost_usd"] == SONNET_COST and row["cost_note"] is None
        assert (row["cache_write_tokens"], row["cached_tokens"]) == (1700, 3000)
    assert stream_record.stream and not whole_record.stream


def test_item_7_the_gateway_names_an_unpriced_bucket_in_the_spend_row(server: WireServer) -> None:
    config = {
        "providers": {"openai": {"api": "chat", "api_key": "sk-test", "base_url": server.url + "/v1"}},
        "throttle": {"max_attempts": 1},
        "gateway": {"models": ["openai:gpt-4o-mini"]},
    }
    with running_gateway(config) as gateway:
        server.push(Answer.json(200, chat_completion("gpt-4o-mini-2024-07-18", AUDIO_USAGE)))
        body = {"model": "openai:gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
        headers = {"authorization": f"Bearer {MASTER_KEY}"}
        assert httpx.post(gateway.url + "/v1/chat/completions", json=body, headers=headers).status_code == 200
        (record,) = _wait_records(gateway, 1)
    row = request_row(record)
    assert row["cost_usd"] is None
    assert "audio input tokens (600)" in row["cost_note"] and "audio output tokens (200)" in row["cost_note"]


# -- the plugins that relay Anthropic's or OpenAI's usage -----------------------------------------------------------


def test_item_7_claude_code_prices_its_one_hour_cache_writes_at_their_rate() -> None:
    from llmplex_claude_code.parse import usage as claude_code_usage

    result = {"usage": {k: v for k, v in ANTHROPIC_USAGE.items() if k != "service_tier"}}
    usage = claude_code_usage(result).priced("claude-code", "claude-sonnet-4-5")
    assert (usage.cache_write_tokens, usage.cache_write_1h_tokens) == (1700, 500)
    assert usage.cost_usd == SONNET_COST


def test_item_7_litellm_keeps_one_hour_writes_and_audio_apart() -> None:
    from llmplex_litellm.parse import usage as litellm_usage

    # LiteLLM's Usage, as its types name the fields (litellm.types.utils; the SDK itself takes seconds to import)
    by_ttl = SimpleNamespace(ephemeral_5m_input_tokens=1200, ephemeral_1h_input_tokens=500)
    raw = SimpleNamespace(
        prompt_tokens=4750,
        completion_tokens=400,
        total_tokens=5150,
        cache_creation_input_tokens=1700,
        prompt_tokens_details=SimpleNamespace(cached_tokens=3000, cache_creation_token_details=by_ttl),
        completion_tokens_details=None,
    )
    usage = litellm_usage(raw).priced("litellm", "anthropic/claude-sonnet-4-5")
    assert (usage.cached_tokens, usage.cache_write_tokens, usage.cache_write_1h_tokens) == (3000, 1700, 500)
    assert usage.cost_usd == SONNET_COST
    audio = SimpleNamespace(
        prompt_tokens=1000,
        completion_tokens=300,
        total_tokens=1300,
        prompt_tokens_details=SimpleNamespace(audio_tokens=600),
        completion_tokens_details=SimpleNamespace(audio_tokens=200),
    )
    assert litellm_usage(audio).priced("litellm", "openai/gpt-audio").cost_usd == GPT_AUDIO_COST


@pytest.mark.parametrize(
    ("counts", "left_over"),
    [
        ({"input_tokens": 100, "input_audio_tokens": 60, "tool_prompt_tokens": 60}, "input tokens (-20)"),
        ({"input_tokens": 10, "cached_tokens": 5, "cache_write_tokens": 5, "input_audio_tokens": 3}, "input tokens"),
        ({"output_tokens": 10, "reasoning_tokens": 8, "output_audio_tokens": 8}, "output tokens (-6)"),
    ],
)
def test_item_7_hostile_parts_that_fit_alone_but_overlap_together_are_never_priced(
    counts: dict[str, int], left_over: str
) -> None:
    """Each part fits its total, so the usage is accepted; priced, the plain tokens would count negative."""
    usage = llmplex.Usage(**counts).priced("gemini", "gemini-2.5-flash")
    assert usage.cost_usd is None
    assert usage.cost_note is not None and left_over in usage.cost_note and "exceed" in usage.cost_note
