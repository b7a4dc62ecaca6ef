"""Build the final Response from the events of a stream."""

from __future__ import annotations

from typing import Any, get_args

from llmplex.types import FinishReason, ReasoningPart, Response, StreamEvent, ToolCall, Usage
from llmplex.types.trusted import assembled
from llmplex.types.usage import settled

__all__ = ["StreamAssembler"]


_UNREPORTED = Usage.unreported()
"""The usage every stream starts with, built once (a ``Usage`` is frozen and pricing copies it: 0.5 µs a stream)."""


class StreamAssembler:
    """Accumulates text, tool-call pieces, usage and finish reason across stream events."""

    __slots__ = (
        "answering",
        "calls",
        "finish_reason",
        "model",
        "provider",
        "reasoning",
        "response_id",
        "text",
        "usage",
    )

    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.usage = _UNREPORTED  # a stream that reports no usage: unknown, not 0
        self.answering = False
        """Whether the provider began to answer (a raw event arrived): from then on the tokens are spent."""
        self.finish_reason: FinishReason | None = None
        self.response_id: str | None = None
        self.reasoning: list[ReasoningPart] = []

    def add(self, event: StreamEvent) -> None:
        """Fold one event into the answer so far."""
        kind = event.type
        if kind == "text":
            self.text.append(event.text)
        elif kind == "tool_call":
            call = self.calls.setdefault(event.tool_call_index or 0, {"id": "", "name": "", "arguments": []})
            call["id"] = event.tool_call_id or call["id"]
            call["name"] = event.tool_name or call["name"]
            call["arguments"].append(event.arguments_delta)
        elif kind == "usage" and event.usage is not None:
            self.usage = event.usage
        elif kind == "finish":
            self.finish_reason = event.finish_reason
        elif kind == "reasoning" and event.reasoning is not None:
            self.reasoning.append(event.reasoning)
        if response_id := event.response_id:
            self.response_id = response_id
        if model := event.model:
            self.model = model

    def response(self, attempts: int, latency: float) -> Response:
        """The whole answer."""
        calls = (
            tuple(
                ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments="".join(c["arguments"]) or "{}")
                for i, c in sorted(self.calls.items())
            )
            if self.calls
            else ()
        )
        finish = self.finish_reason or ("tool_calls" if calls else "stop")
        text, usage, response_id = "".join(self.text), self.usage, self.response_id
        if (  # a text answer whose values already have their fields' types: what validation would build
            not calls
            and not self.reasoning
            and finish in _FINISH_REASONS
            and type(usage) is Usage
            and type(self.model) is str
            and type(self.provider) is str
            and (response_id is None or type(response_id) is str)
            and type(attempts) is int
            and type(latency) is float
            and settled(usage)
        ):
            values = _RESPONSE_DEFAULTS.copy()
            values["text"], values["finish_reason"], values["usage"], values["model"] = text, finish, usage, self.model
            values["provider"], values["response_id"], values["attempts"] = self.provider, response_id, attempts
            values["latency"] = latency
            return assembled(Response, values, set(_ASSEMBLED))
        return Response(
            text=text,
            tool_calls=calls,
            finish_reason=finish,
            usage=usage,
            model=self.model,
            provider=self.provider,
            response_id=response_id,
            attempts=attempts,
            latency=latency,
            reasoning=tuple(self.reasoning),
        )


_FINISH_REASONS = frozenset(get_args(FinishReason))
_ASSEMBLED = frozenset(
    (
        "text",
        "tool_calls",
        "finish_reason",
        "usage",
        "model",
        "provider",
        "response_id",
        "attempts",
        "latency",
        "reasoning",
    )
)
"""The fields ``response`` gives ``Response``: its fields set."""
_RESPONSE_DEFAULTS: dict[str, Any] = {name: field.default for name, field in Response.model_fields.items()}
"""Every field of a response at its default, in the fields' order (as validation puts them)."""
