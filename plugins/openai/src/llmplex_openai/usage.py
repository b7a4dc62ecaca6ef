"""Token usage of either API (Chat Completions or Responses) as core ``Usage``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmplex.types import Usage
from llmplex_openai.wire_json import as_json

__all__ = ["core_usage"]


def _count(details: Any, name: str) -> int:
    if type(details) is dict:  # decoded JSON: no abstract class check for each of the seven counts
        return details.get(name) or 0
    if details is None:
        return 0
    return (details.get(name) if isinstance(details, Mapping) else None) or 0


def _count_details(details: Any) -> Any:
    if type(details) is dict:
        return details.get("cached_tokens_details")
    if details is None:
        return None
    return details.get("cached_tokens_details") if isinstance(details, Mapping) else None


def core_usage(usage: Any) -> Usage:
    """Core usage from a usage object of either API (its JSON, or the SDK's ``CompletionUsage`` /
    ``ResponseUsage``), cached, reasoning and audio tokens included (the audio among the cache reads too:
    ``cached_tokens_details.audio_tokens``), each priced at its own rate.

    OpenAI-compatible servers may leave out the token details (those count as 0) or the whole usage (then
    it is unknown: ``Usage.unreported()``). Counts pass through as reported: core refuses impossible ones.
    """
    usage = as_json(usage)
    if type(usage) is not dict and not isinstance(usage, Mapping):
        return Usage.unreported()
    if "prompt_tokens" in usage or "completion_tokens" in usage:
        input_tokens, output_tokens = usage.get("prompt_tokens"), usage.get("completion_tokens")
        input_details, output_details = usage.get("prompt_tokens_details"), usage.get("completion_tokens_details")
    else:
        input_tokens, output_tokens = usage.get("input_tokens"), usage.get("output_tokens")
        input_details, output_details = usage.get("input_tokens_details"), usage.get("output_tokens_details")
    if input_tokens is None and output_tokens is None:
        return Usage.unreported()
    return Usage.of(  # Usage(**counts), unvalidated when the counts are plain ints that fit (else validated)
        {
            "input_tokens": input_tokens or 0,
            "output_tokens": output_tokens or 0,
            "total_tokens": usage.get("total_tokens") or 0,
            # DeepSeek reports its cache reads as prompt_cache_hit_tokens (inside prompt_tokens), not in the details
            "cached_tokens": _count(input_details, "cached_tokens") or _count(usage, "prompt_cache_hit_tokens"),
            "reasoning_tokens": _count(output_details, "reasoning_tokens"),
            "input_audio_tokens": _count(input_details, "audio_tokens"),
            "cached_audio_tokens": _count(_count_details(input_details), "audio_tokens"),
            "output_audio_tokens": _count(output_details, "audio_tokens"),
        }
    )
