"""Incremental events of a streamed answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from llmplex.types.reasoning import ReasoningPart
from llmplex.types.request import Request
from llmplex.types.response import FinishReason, Response
from llmplex.types.usage import Usage

__all__ = ["StreamEvent", "StreamState"]


class StreamEvent(BaseModel):
    """One piece of a streamed answer.

    ``type`` is ``"text"`` (``text`` holds the delta), ``"tool_call"`` (a piece of
    one call: ``tool_call_index`` and any of id, name, ``arguments_delta``),
    ``"usage"``, ``"finish"`` (``finish_reason``), ``"reasoning"`` (``text``:
    a delta of readable thinking; ``reasoning``: a whole ``ReasoningPart`` once
    the provider finished it), or ``"response"`` — the last event, whose
    ``response`` is the whole answer assembled by core.
    """

    model_config = ConfigDict(frozen=True)

    type: Literal["text", "tool_call", "usage", "finish", "reasoning", "response"]
    text: str = ""
    tool_call_index: int | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    arguments_delta: str = ""
    usage: Usage | None = None
    finish_reason: FinishReason | None = None
    response_id: str | None = None
    model: str | None = None
    reasoning: ReasoningPart | None = None
    response: Response | None = None


@dataclass
class StreamState:
    """Scratch space a provider keeps across the raw events of one stream."""

    request: Request
    data: dict[str, Any] = field(default_factory=dict)
