"""Issue 34 item 4: what a model is priced as is worked out once per plugin and model.

Every priced answer and every stream's end asks ``price_key`` (through ``Usage.priced``); the key is the same
object each time, and pricing with it gives the same usage and cost as before.
"""

from __future__ import annotations

from decimal import Decimal

from llmplex.types import Usage
from llmplex.types.pricing import price_key


def test_the_key_is_worked_out_once_per_plugin_and_model() -> None:
    first = price_key("openai", "models/gpt-4o-mini-item-4")
    assert first == ("openai", "gpt-4o-mini-item-4")
    assert price_key("openai", "models/gpt-4o-mini-item-4") is first


def test_unpriceable_and_litellm_keys_are_as_before() -> None:
    assert price_key("mock", "echo") is None
    assert price_key("litellm", "gemini/gemini-2.5-flash") == ("google", "gemini-2.5-flash")
    assert price_key("litellm", "no-prefix") is None
    assert price_key("openrouter", "openai/gpt-4o") == ("openai", "gpt-4o")
    assert price_key("ollama", "openai/gpt-oss") == ("free", "openai/gpt-oss")


def test_a_usage_priced_twice_by_the_same_key_costs_the_same() -> None:
    usage = Usage(input_tokens=1000, output_tokens=500)
    first, second = usage.priced("openai", "gpt-4o-mini"), usage.priced("openai", "gpt-4o-mini")
    assert first == second == usage
    assert first.cost_usd == second.cost_usd
    assert isinstance(first.cost_usd, Decimal) and first.cost_usd > 0
    assert usage.priced("llamacpp", "qwen").cost_usd == Decimal(0)
