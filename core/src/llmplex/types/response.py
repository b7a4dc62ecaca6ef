"""What a provider's answer becomes."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from llmplex.types.messages import Message, ToolCall
from llmplex.types.reasoning import ReasoningPart
from llmplex.types.trusted import assembled
from llmplex.types.usage import Usage, settled

__all__ = ["FinishReason", "Response"]

FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "refusal", "error", "other"]
_NOT_GIVEN: Any = object()
"""``Response.of``'s default for the fields a plugin may leave out (then not among the answer's fields set)."""


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

    @classmethod
    def of(
        cls,
        *,
        text: Any,
        tool_calls: Any,
        finish_reason: Any,
        usage: Any,
        model: Any,
        response_id: Any,
        raw: Any,
        refusal: Any = _NOT_GIVEN,
        reasoning: Any = _NOT_GIVEN,
    ) -> Response:
        """``Response(text=..., ..., raw=...)`` of these fields (a plugin's parse of every answer; ``refusal`` and
        ``reasoning`` only when given), built without pydantic's validation when each value already has its
        field's type (a known finish reason, a settled ``Usage``, tuples of ``ToolCall`` and ``ReasoningPart``);
        validated as usual otherwise, raising what ``Response`` raises. Equal to the validated answer in every way
        (fields, fields set, ``==``, dump)."""
        fields_set = set(_OF)
        if refusal is _NOT_GIVEN:
            refusal = None
            fields_set.discard("refusal")
        if reasoning is _NOT_GIVEN:
            reasoning = ()
            fields_set.discard("reasoning")
        if not (
            cls is Response
            and type(text) is str
            and type(finish_reason) is str
            and finish_reason in _FINISH_REASONS
            and type(usage) is Usage
            and type(model) is str
            and (response_id is None or type(response_id) is str)
            and (refusal is None or type(refusal) is str)
            and type(tool_calls) is tuple
            and type(reasoning) is tuple
            and (not tool_calls or all(type(call) is ToolCall for call in tool_calls))
            and (not reasoning or all(type(part) is ReasoningPart for part in reasoning))
            and settled(usage)
        ):
            given = {
                "text": text,
                "tool_calls": tool_calls,
                "finish_reason": finish_reason,
                "usage": usage,
                "model": model,
                "response_id": response_id,
                "refusal": refusal,
                "reasoning": reasoning,
                "raw": raw,
            }
            return cls(**{name: value for name, value in given.items() if name in fields_set})
        values = {  # every field, in the fields' order (as validation puts them)
            "text": text,
            "tool_calls": tool_calls,
            "output": None,
            "finish_reason": finish_reason,
            "usage": usage,
            "model": model,
            "provider": "",
            "response_id": response_id,
            "refusal": refusal,
            "attempts": 1,
            "latency": 0.0,
            "cached": False,
            "reasoning": reasoning,
            "dropped": (),
            "raw": raw,
        }
        return assembled(cls, values, fields_set)


_FINISH_REASONS = frozenset(get_args(FinishReason))
_OF = frozenset(("text", "tool_calls", "finish_reason", "usage", "model", "response_id", "refusal", "reasoning", "raw"))
"""The fields ``Response.of`` gives when all are given: its answers' fields set."""
