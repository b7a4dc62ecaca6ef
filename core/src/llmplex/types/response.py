"""What a provider's answer becomes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llmplex.types.messages import Message, ToolCall
from llmplex.types.reasoning import ReasoningPart
from llmplex.types.usage import Usage

__all__ = ["FinishReason", "Response"]

FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "refusal", "error", "other"]


class Response(BaseModel):
    """A completed answer.

    ``output`` holds the validated structured output when one was asked for;
    ``raw`` keeps the provider's own response object (never shown in the repr).
    ``reasoning`` is the answer's opaque reasoning state (see ``ReasoningPart``);
    ``dropped`` names what the provider instance could not take and core left
    out of the request (``drop_unsupported``, reasoning of another provider).
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    output: Any = None
    finish_reason: FinishReason = "stop"
    usage: Usage = Usage()
    model: str = ""
    provider: str = ""
    response_id: str | None = None
    refusal: str | None = None
    attempts: int = 1
    latency: float = Field(default=0.0, description="Seconds from the first attempt to the answer.")
    cached: bool = Field(default=False, description="Served by the response cache: nothing was sent (attempts 0).")
    reasoning: tuple[ReasoningPart, ...] = Field(default=(), repr=False)
    dropped: tuple[str, ...] = ()
    raw: Any = Field(default=None, repr=False, exclude=True)

    def message(self) -> Message:
        """The answer as an assistant message, reasoning state included, to append to a conversation."""
        return Message.assistant(self.text or None, self.tool_calls, self.reasoning)
