"""DeepSeek reports prompt-cache reads as ``prompt_cache_hit_tokens`` (inside ``prompt_tokens``), not in
``prompt_tokens_details``: they land in ``cached_tokens`` and are priced at the cache-read rate."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import llmplex
from llmplex.testing import Answer, OpenAIChatWire, Reply, WireServer

KEY = "sk-deepseek-cache-0123456789"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[WireServer]:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with WireServer() as running:
        yield running


def _answer(hit: int, miss: int) -> dict[str, Any]:
    """A chat completion with DeepSeek's documented usage fields (its API reference, "usage")."""
    body = OpenAIChatWire().response(Reply(text="cached", model="deepseek-chat", response_id="c-1"))
    body["usage"] = {
        "prompt_tokens": hit + miss,
        "completion_tokens": 100,
        "total_tokens": hit + miss + 100,
        "prompt_cache_hit_tokens": hit,
        "prompt_cache_miss_tokens": miss,
    }
    return body


def test_item_2_deepseek_cache_hits_are_cached_tokens_priced_at_the_cache_rate(server: WireServer) -> None:
    server.push(Answer.json(200, _answer(hit=0, miss=3000)), Answer.json(200, _answer(hit=2000, miss=1000)))
    client = llmplex.Client(providers={"deepseek": {"base_url": server.url, "api_key": KEY}})
    cold = client.complete("deepseek:deepseek-chat", "Hi").usage
    warm = client.complete("deepseek:deepseek-chat", "Hi").usage
    assert (cold.input_tokens, cold.cached_tokens) == (3000, 0)
    assert (warm.input_tokens, warm.cached_tokens, warm.output_tokens) == (3000, 2000, 100)
    assert cold.cost_usd is not None and warm.cost_usd is not None
    assert warm.cost_usd < cold.cost_usd, "a cache hit must be priced below the same prompt uncached"


@pytest.mark.parametrize(
    ("plugin", "provider_id"),
    [
        ("mistral", "mistral"),
        ("groq", "groq"),
        ("deepseek", "deepseek"),
        ("openrouter", "openrouter"),
        ("xai", "x-ai"),
        ("together", "together"),
        ("fireworks", "fireworks"),
        ("azure", "azure"),
        ("bedrock", "aws"),
        ("vertex", "google"),
    ],
)
def test_item_2_every_cloud_preset_is_priced_from_its_own_price_list(plugin: str, provider_id: str) -> None:
    """Each plugin's answers are priced from its own provider's list: the cost llmplex gives is the one
    genai-prices computes for that provider and model; a model the list does not know is None with a reason."""
    import genai_prices
    from genai_prices import data

    from llmplex.types import Usage

    (provider,) = [p for p in data.providers if p.id == provider_id]
    tokens = genai_prices.Usage(input_tokens=1000, output_tokens=100)
    for listed in provider.models:
        # Fireworks names its models by account path in its answers (accounts/fireworks/models/NAME)
        model = f"accounts/fireworks/models/{listed.id}" if provider_id == "fireworks" else listed.id
        try:
            expected = genai_prices.calc_price(tokens, model, provider_id=provider_id).total_price
            output_only = genai_prices.Usage(input_tokens=0, output_tokens=100)
            output_price = genai_prices.calc_price(output_only, model, provider_id=provider_id).total_price
        except Exception:  # a model priced by other units (audio, images): try the next one
            continue
        if expected > 0 and output_price > 0:  # an embedding model has no output rate: its output is unpriced
            break
    else:
        pytest.fail(f"genai-prices lists no token-priced model for {provider_id}")
    priced = Usage(input_tokens=1000, output_tokens=100).priced(plugin, model)
    assert priced.cost_usd == expected, (plugin, model, priced.cost_note)
    unknown = Usage(input_tokens=1000, output_tokens=100).priced(plugin, "no-such-model-anywhere")
    assert unknown.cost_usd is None and unknown.cost_note


@pytest.mark.parametrize("plugin", ["ollama", "vllm", "lmstudio"])
def test_item_2_local_servers_cost_nothing(plugin: str) -> None:
    from llmplex.types import Usage

    assert Usage(input_tokens=1000, output_tokens=100).priced(plugin, "qwen3:8b").cost_usd == 0
