"""Reasoning state an answer carries: thinking text, signatures and encrypted items, kept opaque.

A provider that thinks before it answers may need that thinking back on the
next turn (Anthropic's signed ``thinking`` blocks, Gemini's thought
signatures, OpenAI's ``reasoning`` items). A ``ReasoningPart`` holds one such
piece exactly as the provider sent it, so that ``response.message()`` appended
to the conversation replays it byte for byte to the same provider.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from llmplex.errors import LLMConfigurationError
from llmplex.types.refusals import Refusing

__all__ = ["ReasoningPart"]


class ReasoningPart(Refusing):
    """One opaque piece of a model's reasoning, as its provider sent it.

    ``format`` names the wire format it came in (``"anthropic"``, ``"gemini"``,
    ``"openai-responses"``): only a provider instance that declares that format
    in ``Capabilities.reasoning_formats`` is sent it; any other drops it and
    says so in a ``Dropped`` event. ``text`` is the readable thinking or its
    summary, when the provider gave one; ``data`` is the provider's own block
    (JSON data), replayed unchanged.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = Field(min_length=1)
    text: str = ""
    data: dict[str, Any] = Field(repr=False)

    @field_validator("data")
    @classmethod
    def _json_data(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Only JSON data can be replayed unchanged: anything else is refused now, not on the next turn."""
        try:
            json.dumps(data, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise LLMConfigurationError(f"a reasoning part's data must be JSON data: {exc}") from None
        return data
