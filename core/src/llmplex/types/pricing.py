"""What a response cost in US dollars, from the ``genai-prices`` package (imported on first use).

A usage is priced from the llmplex *plugin* that answered and the model id:
the plugin names the ``genai-prices`` provider (``PRICE_PROVIDERS``);
litellm's ``"provider/model"`` ids name it in the model id, and so do the ids
gateways report (``openai/gpt-4o-mini`` from an OpenAI-compatible gateway).
Dated snapshots (``gpt-4o-mini-2024-07-18``) are priced as genai-prices matches
them, else as the model without its date or version suffix. A local model
(llama.cpp) costs ``0``; a provider or model ``genai-prices`` does not know
(the mock provider, a third-party plugin, a fine-tune) has no price: ``None``.
"""

from __future__ import annotations

import re
import warnings
from decimal import Decimal
from functools import lru_cache
from typing import Final, NamedTuple

__all__ = [
    "FREE",
    "LITELLM_PREFIXES",
    "PRICE_PROVIDERS",
    "Buckets",
    "PriceKey",
    "price_buckets",
    "price_key",
    "price_of",
    "priced_model",
]

FREE: Final = "free"
"""The price provider of plugins whose models run locally: every call costs ``Decimal(0)``."""

PRICE_PROVIDERS: Final[dict[str, str | None]] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "claude-code": "anthropic",
    "gemini": "google",
    "litellm": None,  # the provider is named in the model id: see LITELLM_PREFIXES
    "llamacpp": FREE,
    "bedrock": "aws",
    "vertex": "google",  # Gemini and Claude on Vertex AI: genai-prices' google provider prices both
    "azure": "azure",
    # the OpenAI-compatible presets (llmplex-openai-compatible): the cloud ones at their own prices, the
    # servers that run on your own machine (Ollama, vLLM, LM Studio) cost nothing per token
    "mistral": "mistral",
    "groq": "groq",
    "deepseek": "deepseek",
    "openrouter": "openrouter",
    "xai": "x-ai",
    "together": "together",
    "fireworks": "fireworks",
    "ollama": FREE,
    "vllm": FREE,
    "lmstudio": FREE,
}
"""llmplex plugin name → ``genai-prices`` provider id (``None``: named by the model id)."""

LITELLM_PREFIXES: Final[dict[str, str]] = {
    "openai": "openai",
    "text-completion-openai": "openai",
    "anthropic": "anthropic",
    "gemini": "google",
    "vertex_ai": "google",
    "mistral": "mistral",
    "groq": "groq",
    "deepseek": "deepseek",
    "xai": "x-ai",
    "bedrock": "aws",
    "azure": "azure",
    "cohere": "cohere",
    "cohere_chat": "cohere",
    "together_ai": "together",
    "fireworks_ai": "fireworks",
    "perplexity": "perplexity",
    "openrouter": "openrouter",
}
"""litellm's provider prefix (``"gemini/gemini-2.5-flash"``) → ``genai-prices`` provider id."""

_SNAPSHOT = re.compile(r"(?:[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{3}|latest))$")
"""A snapshot's suffix: ``-2024-07-18``, ``-20250929``, ``@20241022``, ``-001``, ``-latest``."""

PriceKey = tuple[str, str]
"""``(genai-prices provider id or FREE, model id)``: what a usage is priced as."""


@lru_cache(maxsize=1024)
def price_key(plugin: str, model: str) -> PriceKey | None:
    """What ``model`` answered by ``plugin`` is priced as; ``None`` when it cannot be priced (worked out once per
    plugin and model: every priced answer and stream asks)."""
    prefix, slash, name = model.partition("/")
    named = LITELLM_PREFIXES.get(prefix) if slash and name else None
    if plugin == "litellm":
        return None if named is None else (named, name)
    provider = PRICE_PROVIDERS.get(plugin)
    if provider is None or not model:
        return None
    if named is not None and provider != FREE:
        return named, name  # a gateway's "provider/model" id names the provider that priced it
    return provider, model.removeprefix("models/")


def priced_model(plugin: str, answered: str, asked: str) -> str:
    """The model id to price an answer by: the one that ``answered`` when llmplex can name its provider, else
    the one ``asked`` for (litellm reports ``o4-mini-2025-04-16`` for ``openai/o4-mini``)."""
    if not answered or (price_key(plugin, answered) is None and price_key(plugin, asked) is not None):
        return asked
    return answered


class Buckets(NamedTuple):
    """The token buckets of one usage, each a part of ``input_tokens`` or ``output_tokens`` (see ``Usage``)."""

    input_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_1h_tokens: int = 0
    input_audio_tokens: int = 0
    cached_audio_tokens: int = 0
    output_audio_tokens: int = 0
    tool_prompt_tokens: int = 0


_GENAI_KEYS: Final = {
    "input_tokens": "input_tokens",
    "cached_tokens": "cache_read_tokens",
    "cache_write_tokens": "cache_write_tokens",
    "output_tokens": "output_tokens",
    "reasoning_tokens": "output_reasoning_tokens",
    "cache_write_1h_tokens": "cache_write_1h_tokens",
    "input_audio_tokens": "input_audio_tokens",
    "cached_audio_tokens": "cache_audio_read_tokens",
    "output_audio_tokens": "output_audio_tokens",
    "tool_prompt_tokens": "input_tool_tokens",
}
"""Each bucket's ``genai-prices`` usage key (which prices a bucket from the most specific rate the model has)."""


def _leaves(b: Buckets) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Each bucket's own tokens (its parts taken out), with the ``genai-prices`` rates that are its own: the
    first one the model has prices it. Reasoning is billed as output and tool-use prompts as input by every
    provider that reports them; every other bucket has a rate of its own or no known price."""
    audio_in = b.input_audio_tokens - b.cached_audio_tokens
    plain_in = b.input_tokens - b.cached_tokens - b.cache_write_tokens - audio_in - b.tool_prompt_tokens
    return {
        "input tokens": (plain_in, ("input_mtok",)),
        "cache reads": (b.cached_tokens - b.cached_audio_tokens, ("cache_read_mtok",)),
        "audio cache reads": (b.cached_audio_tokens, ("cache_audio_read_mtok",)),
        "cache writes": (b.cache_write_tokens - b.cache_write_1h_tokens, ("cache_write_mtok",)),  # 5-minute ones
        "1-hour cache writes": (b.cache_write_1h_tokens, ("cache_write_1h_mtok",)),
        "audio input tokens": (audio_in, ("input_audio_mtok",)),
        "tool-use prompt tokens": (b.tool_prompt_tokens, ("input_tool_mtok", "input_mtok")),
        "output tokens": (b.output_tokens - b.reasoning_tokens - b.output_audio_tokens, ("output_mtok",)),
        "reasoning tokens": (b.reasoning_tokens, ("output_reasoning_mtok", "output_mtok")),
        "audio output tokens": (b.output_audio_tokens, ("output_audio_mtok",)),
    }


def price_of(
    key: PriceKey,
    input_tokens: int,
    cached_tokens: int,
    cache_write_tokens: int,
    output_tokens: int,
    reasoning_tokens: int,
    *,
    batch: bool = False,
) -> Decimal | None:
    """The price of these tokens (input counts cached reads and cache writes too); ``None``: not known.

    ``batch``: at the provider's Batch API price where ``genai-prices`` has one (else the standard price).
    """
    buckets = Buckets(input_tokens, cached_tokens, cache_write_tokens, output_tokens, reasoning_tokens)
    return price_buckets(key, buckets, batch=batch)[0]


@lru_cache(maxsize=4096)
def price_buckets(key: PriceKey, buckets: Buckets, *, batch: bool = False) -> tuple[Decimal | None, str | None]:
    """The price of ``buckets``, each at its own rate, or ``None`` and why: the model is unknown, or a bucket
    with tokens has no price of its own (it is never counted at another bucket's rate).

    ``batch``: at the provider's Batch API price where ``genai-prices`` has one (else the standard price).
    """
    provider, model = key
    if provider == FREE:
        return Decimal(0), None
    leaves = _leaves(buckets)
    if overlapping := [f"{bucket} ({count})" for bucket, (count, _) in leaves.items() if count < 0]:
        # each part fits its total alone, yet together they pass it: no leaf may be priced at a negative count
        return None, (
            f"the usage's parts together exceed the total that holds them (left over: {', '.join(overlapping)}), "
            f"so this usage of {provider} model {model!r} cannot be priced"
        )
    import genai_prices  # 0.5 s of price data: loaded when a cost is first asked for

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        context = {"processing": "batch"} if batch else None
        for name in dict.fromkeys((model, _SNAPSHOT.sub("", model))):
            try:  # an empty usage costs nothing to price and names the model's rates
                rates = genai_prices.calc_price(
                    genai_prices.Usage(), name, provider_id=provider, price_context=context
                ).model_price
            except Exception:  # an unknown model (LookupError) or a price the data cannot compute: no price
                continue
            unpriced = [
                f"{bucket} ({count})"
                for bucket, (count, own) in leaves.items()
                if count > 0 and all(getattr(rates, rate, None) is None for rate in own)
            ]
            if unpriced:
                return None, (
                    f"genai-prices has no price for the {', '.join(unpriced)} of {provider} model {model!r}; "
                    "the cost is unknown rather than counted at another rate"
                )
            usage = genai_prices.Usage(
                **{_GENAI_KEYS[name]: count for name, count in buckets._asdict().items() if count}
            )
            try:
                return rates.calc_price(usage)["total_price"], None
            except ValueError as exc:  # buckets that overlap past their total
                return None, f"genai-prices cannot price this usage of {provider} model {model!r}: {exc}"
        return None, f"genai-prices has no price for {provider} model {model!r}"
