"""Thinking on Gemini: ``reasoning_effort`` as the thinking config, and thought signatures carried across turns.

Gemini signs its thinking with ``thought_signature`` on the parts of an answer
(the first function call of a turn, or its last text part) and wants the
model's turn back as it came. An answer with thoughts or signatures keeps its
parts, whole, as one opaque ``ReasoningPart``; replayed to Gemini, that turn
is sent as those parts instead of being rebuilt from text and tool calls.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from google.genai import types

from llmplex.types import Message, ReasoningPart

__all__ = ["FORMAT", "any_carried", "reasoning_of", "replayed_parts", "thinking_config"]

FORMAT = "gemini"
"""``ReasoningPart.format`` of a Gemini model turn kept with its thoughts and signatures."""

_BUDGETS = {"minimal": 512, "low": 1024, "medium": 8192, "high": 24576, "xhigh": 24576, "max": 24576}
"""``thinking_budget`` per effort for Gemini 2.x (2.5 Flash takes at most 24,576)."""
_LEVELS = {"xhigh": "HIGH", "max": "HIGH"}
"""Efforts above Gemini 3's highest thinking level, as that level."""
_GENERATION = re.compile(r"^(?:models/)?gemini-(\d+)")
_FIRST_LEVELLED_GENERATION = 3


def thinking_config(model: str, effort: str) -> dict[str, Any]:
    """The ``thinking_config`` for ``effort``: a thinking level from Gemini 3 on, a token budget before."""
    generation = _GENERATION.match(model)
    if generation is not None and int(generation.group(1)) >= _FIRST_LEVELLED_GENERATION:
        return {"thinking_level": _LEVELS.get(effort, effort.upper())}
    return {"thinking_budget": _BUDGETS[effort]}


def any_carried(parts: Iterable[Any]) -> bool:
    """Whether any part is a thought or has a signature: the SDK's ``Part`` or its wire form (a ``dict``), in one
    loop with no call per part."""
    for part in parts:
        if type(part) is dict:
            if part.get("thought") or part.get("thoughtSignature"):
                return True
        elif part.thought or part.thought_signature:
            return True
    return False


def _dumped(part: Any) -> dict[str, Any]:
    """The SDK's ``Part`` as JSON in its field names (a wire-form part is read by the SDK's model first)."""
    model = types.Part.model_validate(part) if type(part) is dict else part
    dumped: dict[str, Any] = model.model_dump(mode="json", exclude_none=True)
    return dumped


def reasoning_of(parts: Iterable[Any]) -> ReasoningPart | None:
    """The model turn's parts (the SDK's ``Part`` models, or their wire form) as one opaque part, when any of
    them is a thought or carries a signature (``None`` otherwise: nothing to carry)."""
    parts = list(parts)
    if not any_carried(parts):
        return None
    dumped = [_dumped(part) for part in parts]
    text = "".join(part.get("text") or "" for part in dumped if part.get("thought"))
    return ReasoningPart(format=FORMAT, text=text, data={"parts": dumped})


def replayed_parts(message: Message) -> list[dict[str, Any]] | None:
    """The parts an assistant message came with, when it carries them and they still say what the message
    says (the same tool calls, in order); ``None``: rebuild the turn from its text and tool calls."""
    kept = [part for part in message.reasoning if part.format == FORMAT]
    if len(kept) != 1 or not isinstance(kept[0].data.get("parts"), list):
        return None
    parts: list[dict[str, Any]] = [dict(part) for part in kept[0].data["parts"] if isinstance(part, dict)]
    names = [part["function_call"].get("name") for part in parts if isinstance(part.get("function_call"), dict)]
    if names != [call.name for call in message.tool_calls]:
        return None
    return parts
