"""Issue 34 item 5: the gateway's warm-up loads the price data of the models it serves.

The first priced answer of a worker loaded genai-prices' data (``price_buckets`` imports it on first use): half a
second quiet, 1-3 s at load 5-14 (py-spy on a keyed test gateway: most of the first request's time), inside
that request, so every request and stream in flight at the time waited, and the spend tests' first request came
near httpx's 5 s timeout under load. ``warm_up`` now prices each model it prepares once (a model without a price,
such as the mock's, asks nothing); a model that cannot be routed is still only logged.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import genai_prices
import pytest

from llmplex.errors import LLMConfigurationError
from llmplex.gateway.app import warm_up
from llmplex.types.pricing import price_buckets

ROUTES = {"up:gpt-4o-mini": ("openai", "gpt-4o-mini"), "mock:echo": ("mock", "echo")}


class Client:
    """What ``warm_up`` reads of a client: its config, observers, providers and routes (no SDK imported)."""

    def __init__(self) -> None:
        gateway = SimpleNamespace(models=("up:gpt-4o-mini", "mock:echo", "nowhere:model"))
        self.config = SimpleNamespace(providers={}, groups={}, gateway=gateway, aliases={"fast": "up:gpt-4o-mini"})
        self.config.disabled = ()
        self.host = SimpleNamespace(load_observers=lambda disabled: None)
        self.prepared: list[str] = []

    def route(self, model: str) -> Any:
        if model not in ROUTES:
            raise LLMConfigurationError(f"unknown provider in {model!r}")
        plugin, name = ROUTES[model]
        provider = SimpleNamespace(info=SimpleNamespace(name=plugin), client=lambda _: self.prepared.append(model))
        return SimpleNamespace(provider=provider, model=name)


def test_item_5_the_warm_up_prices_each_served_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str, str | None]] = []
    real = genai_prices.calc_price

    def calc_price(usage: Any, model_ref: str, *, provider_id: str | None = None, **rest: Any) -> Any:
        asked.append((model_ref, provider_id))
        return real(usage, model_ref, provider_id=provider_id, **rest)

    monkeypatch.setattr(genai_prices, "calc_price", calc_price)
    price_buckets.cache_clear()  # asked again, whatever an earlier test priced
    client = Client()
    warm_up(client)  # type: ignore[arg-type]
    assert client.prepared == ["up:gpt-4o-mini", "mock:echo"]  # the unknown one only logged
    assert asked == [("gpt-4o-mini", "openai")]  # once (the alias is the same model); the mock has no price
