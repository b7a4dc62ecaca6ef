"""Issue 16 item 2: ``Response.usage.cost_usd`` from genai-prices, through the real plugins over fake networks."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal

import genai_prices
import pytest

import llmplex
from llmplex.types import Usage
from tests.contract import fixtures_openai as fx
from tests.plugins.anthropic import wire as anthropic_wire
from tests.plugins.anthropic.fake_http import FakeHTTP
from tests.plugins.gemini import wire as gemini_wire
from tests.plugins.openai.conftest import FakeAPI


def expected(provider: str, model: str, **tokens: int) -> Decimal:
    """genai-prices' own figure for these tokens."""
    return genai_prices.calc_price(genai_prices.Usage(**tokens), model, provider_id=provider).total_price


def test_item_2_openai_gpt_4o_mini_cost_matches_genai_prices(openai_api: FakeAPI) -> None:
    openai_api.reply("/chat/completions", fx.chat_completion("Hi", usage=fx.TokenUsage(1200, 340, 1024, 0)))
    llm = llmplex.Client(providers={"openai": {"api": "chat"}}, throttle={"max_attempts": 1})

    usage = llm.complete("openai:gpt-4o-mini", "hi").usage

    assert usage.cost_usd == expected("openai", fx.MODEL, input_tokens=1200, cache_read_tokens=1024, output_tokens=340)
    assert usage.cost_usd is not None
    assert usage.cost_usd > 0


def test_item_2_anthropic_cache_reads_and_writes_are_priced(
    monkeypatch: pytest.MonkeyPatch, fake_http: FakeHTTP
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    reported = anthropic_wire.usage(300, 120, cache_read=2000, cache_creation=1500)
    fake_http.reply(json_body=anthropic_wire.message(model="claude-sonnet-4-5-20250929", message_usage=reported))
    llm = llmplex.Client(throttle={"max_attempts": 1})

    usage = llm.complete("anthropic:claude-sonnet-4-5", "hi").usage

    assert (usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens) == (3800, 2000, 1500)
    assert usage.cost_usd == expected(
        "anthropic",
        "claude-sonnet-4-5",
        input_tokens=3800,
        cache_read_tokens=2000,
        cache_write_tokens=1500,
        output_tokens=120,
    )
    # cache writes cost more than plain input, cache reads less: both are counted
    assert usage.cost_usd != expected("anthropic", "claude-sonnet-4-5", input_tokens=3800, output_tokens=120)


def test_item_2_anthropic_stream_carries_cache_writes_and_cost(
    monkeypatch: pytest.MonkeyPatch, fake_http: FakeHTTP
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    start = anthropic_wire.usage(300, 1, cache_read=2000, cache_creation=1500)
    fake_http.reply_stream(anthropic_wire.stream_body([{"text": ["Hel", "lo"]}], start_usage=start, output_tokens=120))
    llm = llmplex.Client(throttle={"max_attempts": 1})

    final = list(llm.stream(f"anthropic:{anthropic_wire.MODEL}", "hi"))[-1].response

    assert final is not None
    assert (final.usage.cached_tokens, final.usage.cache_write_tokens, final.usage.output_tokens) == (2000, 1500, 120)
    assert final.usage.cost_usd == expected(
        "anthropic",
        anthropic_wire.MODEL,
        input_tokens=3800,
        cache_read_tokens=2000,
        cache_write_tokens=1500,
        output_tokens=120,
    )


def test_item_2_gemini_flash_with_thoughts_cost_matches_genai_prices(
    monkeypatch: pytest.MonkeyPatch, fake_http: FakeHTTP
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyTESTKEY_0123456789abcdefghij")
    metadata = gemini_wire.usage(900, 200, thoughts=150, cached=512)
    fake_http.reply(json_body=gemini_wire.response([gemini_wire.text_part("Paris")], usage_metadata=metadata))
    llm = llmplex.Client(throttle={"max_attempts": 1})

    usage = llm.complete("gemini:gemini-2.5-flash", "Capital of France?").usage

    assert usage.cost_usd == expected(
        "google",
        "gemini-2.5-flash",
        input_tokens=900,
        cache_read_tokens=512,
        output_tokens=350,
        output_reasoning_tokens=150,
    )
    assert usage.cost_usd is not None
    assert usage.cost_usd > 0


def test_item_2_unknown_model_costs_none(openai_api: FakeAPI) -> None:
    openai_api.reply("/chat/completions", fx.chat_completion("Hi", model="my-fine-tune-that-no-one-prices"))
    llm = llmplex.Client(providers={"openai": {"api": "chat"}}, throttle={"max_attempts": 1})

    response = llm.complete("openai:my-fine-tune-that-no-one-prices", "hi")

    assert response.usage.input_tokens > 0
    assert response.usage.cost_usd is None


def test_item_2_mock_provider_has_no_price_and_llamacpp_is_free() -> None:
    assert llmplex.complete("mock:echo", "hi").usage.cost_usd is None
    assert Usage(input_tokens=10, output_tokens=5).priced("llamacpp", "qwen2.5-coder").cost_usd == Decimal(0)


@pytest.mark.parametrize(
    ("model", "provider", "bare"),
    [("openai/gpt-4o-mini", "openai", "gpt-4o-mini"), ("gemini/gemini-2.5-flash", "google", "gemini-2.5-flash")],
)
def test_item_2_litellm_ids_name_their_provider(model: str, provider: str, bare: str) -> None:
    usage = Usage(input_tokens=1000, output_tokens=100).priced("litellm", model)
    assert usage.cost_usd == expected(provider, bare, input_tokens=1000, output_tokens=100)
    assert Usage(input_tokens=1000).priced("litellm", "no-prefix-model").cost_usd is None


def test_item_2_tool_loop_sums_the_cost_of_every_round() -> None:
    first = Usage(input_tokens=1000, output_tokens=100).priced("openai", "gpt-4o-mini")
    second = Usage(input_tokens=2000, output_tokens=50).priced("anthropic", "claude-sonnet-4-5")
    assert first.cost_usd is not None
    assert second.cost_usd is not None
    assert (Usage() + first + second).cost_usd == first.cost_usd + second.cost_usd
    assert (first + Usage(input_tokens=5)).cost_usd is None  # a round without a price: the total is unknown


def test_item_2_cost_is_computed_when_read_so_import_and_calls_stay_lean() -> None:
    code = (
        "import sys, llmplex\n"
        "r = llmplex.complete('mock:echo', 'hi')\n"
        "assert 'genai_prices' not in sys.modules, 'imported before a cost was read'\n"
        "repr(r)\n"
        "assert 'genai_prices' not in sys.modules, 'repr computed the cost'\n"
        "from llmplex.types import Usage\n"
        "print(Usage(input_tokens=1).priced('openai', 'gpt-4o').cost_usd)\n"
        "assert 'genai_prices' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert Decimal(done.stdout.strip()) > 0


def test_item_2_an_unpriceable_usage_is_not_copied_on_every_call() -> None:
    usage = Usage(input_tokens=3, output_tokens=3)
    assert usage.priced("mock", "echo") is usage
    priced = usage.priced("openai", "gpt-4o")
    assert priced is not usage
    assert priced.priced("openai", "gpt-4o") is priced
