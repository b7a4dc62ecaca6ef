"""The golden cases: each shipped provider's recorded answer (``tests.money.recorded``), the client that reaches
it on a local server, the usage it must report and its cost computed by hand from the published price."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest
from llmplex_llamacpp.server import LocalServer

import llmplex
from llmplex.testing.server import WireServer
from tests.money import recorded

M = Decimal(1_000_000)

# US dollars per million tokens, as published (openai.com/api/pricing, anthropic.com/pricing,
# ai.google.dev/gemini-api/docs/pricing; read 2026-11-26) and as genai-prices 0.2.3 has them
# (test_item_2_price_literals_are_genai_prices_own checks each one).
O4_MINI = {"input": Decimal("1.10"), "cache_read": Decimal("0.275"), "output": Decimal("4.40")}
GPT_5_MINI = {"input": Decimal("0.25"), "cache_read": Decimal("0.025"), "output": Decimal("2.00")}
SONNET_4_5 = {
    "input": Decimal("3"),
    "cache_read": Decimal("0.30"),
    "cache_write": Decimal("3.75"),  # 5-minute cache writes
    "output": Decimal("15"),
}
GEMINI_2_5_FLASH = {"input": Decimal("0.30"), "cache_read": Decimal("0.03"), "output": Decimal("2.50")}

# each token priced once: uncached input + cache reads + cache writes at their rates, reasoning as output
O4_MINI_COST = (86 * O4_MINI["input"] + 1920 * O4_MINI["cache_read"] + 300 * O4_MINI["output"]) / M
GPT_5_MINI_COST = (1024 * GPT_5_MINI["input"] + 2048 * GPT_5_MINI["cache_read"] + 500 * GPT_5_MINI["output"]) / M
SONNET_COST = (
    50 * SONNET_4_5["input"]
    + 3000 * SONNET_4_5["cache_read"]
    + 1200 * SONNET_4_5["cache_write"]
    + 400 * SONNET_4_5["output"]
) / M
GEMINI_COST = (
    104 * GEMINI_2_5_FLASH["input"] + 4096 * GEMINI_2_5_FLASH["cache_read"] + 440 * GEMINI_2_5_FLASH["output"]
) / M


@dataclass(frozen=True)
class Golden:
    """One provider's recorded answer and what it must count and cost."""

    spec: str
    settings: dict[str, Any]
    whole: Any
    stream: list[bytes]
    usage: dict[str, int]
    cost: Decimal
    base_path: str = ""
    env: dict[str, str] = field(default_factory=dict)


CHAT_USAGE = {
    "input_tokens": 2006,
    "output_tokens": 300,
    "total_tokens": 2306,
    "cached_tokens": 1920,
    "cache_write_tokens": 0,
    "reasoning_tokens": 256,
}
GOLDEN = {
    "openai-chat": Golden(
        "openai:o4-mini",
        {"api": "chat", "api_key": "sk-test-money"},
        recorded.CHAT_COMPLETION,
        recorded.CHAT_STREAM,
        CHAT_USAGE,
        O4_MINI_COST,
        base_path="/v1",
    ),
    "openai-responses": Golden(
        "openai:gpt-5-mini",
        {"api": "responses", "api_key": "sk-test-money"},
        recorded.RESPONSES_RESPONSE,
        recorded.RESPONSES_STREAM,
        {
            "input_tokens": 3072,
            "output_tokens": 500,
            "total_tokens": 3572,
            "cached_tokens": 2048,
            "cache_write_tokens": 0,
            "reasoning_tokens": 448,
        },
        GPT_5_MINI_COST,
        base_path="/v1",
    ),
    "anthropic": Golden(
        "anthropic:claude-sonnet-4-5",
        {"api_key": "sk-ant-test-money"},
        recorded.ANTHROPIC_MESSAGE,
        recorded.ANTHROPIC_STREAM,
        {
            "input_tokens": 4250,
            "output_tokens": 400,
            "total_tokens": 4650,
            "cached_tokens": 3000,
            "cache_write_tokens": 1200,
            "reasoning_tokens": 0,  # Anthropic bills thinking as output and reports no separate count
        },
        SONNET_COST,
    ),
    "gemini": Golden(
        "gemini:gemini-2.5-flash",
        {"api_key": "AIzaSy-test-money"},
        recorded.GEMINI_RESPONSE,
        recorded.GEMINI_STREAM,
        {
            "input_tokens": 4200,
            "output_tokens": 440,
            "total_tokens": 4640,
            "cached_tokens": 4096,
            "cache_write_tokens": 0,
            "reasoning_tokens": 380,
        },
        GEMINI_COST,
    ),
    "litellm": Golden(
        "litellm:openai/o4-mini",
        {"api_key": "sk-test-money"},
        recorded.CHAT_COMPLETION,
        recorded.CHAT_STREAM,
        CHAT_USAGE,
        O4_MINI_COST,
        base_path="/v1",
    ),
    "llamacpp": Golden(
        "llamacpp:qwen2.5-coder-1.5b",
        {},
        recorded.chat_completion("qwen2.5-coder-1.5b"),
        recorded.chat_stream("qwen2.5-coder-1.5b"),
        CHAT_USAGE,
        Decimal(0),  # a local model: free
        base_path="/v1",
    ),
}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[WireServer]:
    """The local server; the llamacpp plugin is pointed at it instead of starting llama.cpp."""
    with WireServer() as running:
        url = running.url + "/v1"
        monkeypatch.setattr(LocalServer, "for_model", lambda model, **_: SimpleNamespace(openai_base_url=url))
        yield running


def client_for(case: Golden, url: str) -> llmplex.Client:
    """A client reaching ``case``'s plugin at the local server ``url``, without retries."""
    prefix = case.spec.partition(":")[0]
    settings = dict(case.settings)
    if prefix == "litellm":
        settings["api_base"] = url + case.base_path
    elif prefix != "llamacpp":
        settings["base_url"] = url + case.base_path
    return llmplex.Client(providers={prefix: settings}, throttle={"max_attempts": 1})
