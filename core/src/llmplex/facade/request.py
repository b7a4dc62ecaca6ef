"""One request of an LLMClient batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic_core

__all__ = ["LLMRequest", "input_text"]


@dataclass(frozen=True)
class LLMRequest:
    """Ask the model for a ``schema`` value, given ``instructions`` and ``input_data``.

    ``entity_key`` is ``"chain:entity_id"`` to continue that entity's response
    chain (or just ``"entity_id"`` to account usage to it); ``depth_override``
    replaces the client's ``default_depth`` for this request.
    """

    instructions: str
    input_data: Any
    schema: Any
    entity_key: str | None = None
    depth_override: int | None = None


def input_text(input_data: Any) -> str:
    """A request's ``input_data`` as the user message: a string as it is, anything else as indented JSON."""
    if isinstance(input_data, str):
        return input_data
    return pydantic_core.to_json(input_data, indent=2, fallback=str).decode()
