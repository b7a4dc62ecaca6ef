"""Extended thinking: ``reasoning_effort`` as the Messages API's thinking settings, and thinking blocks as
opaque ``ReasoningPart``s that are replayed unchanged.

Models of the Claude 3.7 and 4 to 4.5 generations think with a token budget
(``thinking.type = "enabled"``, ``budget_tokens`` below ``max_tokens``); later
ones think adaptively and take the effort itself (``output_config.effort``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.types import Message, ReasoningPart

__all__ = [
    "BUDGETS",
    "FORMAT",
    "reasoning_blocks",
    "reasoning_part",
    "thinking_options",
]

FORMAT = "anthropic"
"""``ReasoningPart.format`` of thinking and redacted-thinking blocks."""

BUDGETS = {"minimal": 1024, "low": 1024, "medium": 4096, "high": 16384, "xhigh": 24576, "max": 31999}
"""``budget_tokens`` per effort for models that think with a budget (the API's minimum is 1,024; ``max`` fits
below the 32,000 output tokens of the smallest budget model's limit)."""

_LEVELS = {"minimal": "low"}
"""Efforts adaptive thinking does not have, as the nearest one it has (it takes low to max)."""

_BUDGET_MODELS = re.compile(r"^claude-3-7|^claude-(sonnet|opus|haiku)-4(-[015])?(-\d{8})?$")
"""Models that take ``thinking.type = "enabled"`` with a budget rather than adaptive thinking and an effort."""

_BLOCK_KEYS = ("type", "thinking", "signature", "data")
"""The keys of thinking blocks, in the order the API writes them."""


def thinking_options(model: str, effort: str, max_tokens: int | None, default_max_tokens: int) -> dict[str, Any]:
    """The request fields that ask ``model`` to think with ``effort``; ``max_tokens`` included where the budget
    needs room (the answer's own ``default_max_tokens`` on top of the budget when the request set none)."""
    if _BUDGET_MODELS.search(model) is None:
        return {"thinking": {"type": "adaptive"}, "output_config": {"effort": _LEVELS.get(effort, effort)}}
    budget = BUDGETS[effort]
    if max_tokens is not None and max_tokens <= budget:
        raise LLMConfigurationError(
            f"reasoning_effort={effort!r} gives {model} a thinking budget of {budget} tokens, which must be below "
            f"max_tokens ({max_tokens}): raise max_tokens above {budget}, or lower reasoning_effort"
        )
    return {
        "thinking": {"type": "enabled", "budget_tokens": budget},
        "max_tokens": max_tokens if max_tokens is not None else budget + default_max_tokens,
    }


def reasoning_part(block: Any) -> ReasoningPart:
    """A ``thinking`` or ``redacted_thinking`` block (decoded JSON or the SDK's model) as an opaque part."""
    if isinstance(block, Mapping):
        data = dict(block)
    else:
        dumped = block.model_dump(mode="json", exclude_unset=True)
        data = {key: dumped.pop(key) for key in _BLOCK_KEYS if key in dumped} | dumped
    text = data.get("thinking")
    return ReasoningPart(format=FORMAT, text=text if isinstance(text, str) else "", data=data)


def reasoning_blocks(message: Message) -> list[dict[str, Any]]:
    """The thinking blocks an assistant message carries, exactly as they came (core left out other formats)."""
    return [dict(part.data) for part in message.reasoning if part.format == FORMAT]
