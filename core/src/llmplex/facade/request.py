"""One request of an LLMClient batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["LLMRequest"]


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
