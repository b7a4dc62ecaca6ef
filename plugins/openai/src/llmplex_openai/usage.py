"""Token usage of either API (Chat Completions or Responses) as core ``Usage``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openai.types.completion_usage import CompletionUsage

from llmplex.types import Usage

if TYPE_CHECKING:
    from openai.types.responses import ResponseUsage

__all__ = ["core_usage"]


def core_usage(usage: CompletionUsage | ResponseUsage | None) -> Usage:
    """Core usage from a ``CompletionUsage`` or a ``ResponseUsage``, cached and reasoning tokens included.

    OpenAI-compatible servers may leave out the token details (or the usage); those count as 0.
    """
    if usage is None:
        return Usage()
    input_details: object
    output_details: object
    if isinstance(usage, CompletionUsage):
        input_tokens, output_tokens = usage.prompt_tokens, usage.completion_tokens
        input_details, output_details = usage.prompt_tokens_details, usage.completion_tokens_details
    else:
        input_tokens, output_tokens = usage.input_tokens, usage.output_tokens
        input_details, output_details = usage.input_tokens_details, usage.output_tokens_details
    return Usage(
        input_tokens=input_tokens or 0,
        output_tokens=output_tokens or 0,
        total_tokens=usage.total_tokens or 0,
        cached_tokens=getattr(input_details, "cached_tokens", None) or 0,
        reasoning_tokens=getattr(output_details, "reasoning_tokens", None) or 0,
    )
