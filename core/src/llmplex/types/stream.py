"""Incremental events of a streamed answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from llmplex.types.reasoning import ReasoningPart
from llmplex.types.request import Request
from llmplex.types.response import FinishReason, Response
from llmplex.types.trusted import assembled
from llmplex.types.usage import Usage, settled

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

    @classmethod
    def text_delta(cls, text: str, response_id: str | None = None, model: str | None = None) -> StreamEvent:
        """``StreamEvent(type="text", text=text, response_id=response_id, model=model)``, the event of nearly every
        streamed chunk: built without validation when the values already have their fields' types (a ``str``
        text, ``str`` or ``None`` ids), validated as usual otherwise. Equal to the validated event in every way
        (fields, fields set, ``==``, hash, dump)."""
        if (
            type(text) is str
            and (response_id is None or type(response_id) is str)
            and (model is None or type(model) is str)
        ):
            values = _TEXT_DEFAULTS.copy()
            values["text"], values["response_id"], values["model"] = text, response_id, model
            return assembled(cls, values, {"type", "text", "response_id", "model"})
        return cls(type="text", text=text, response_id=response_id, model=model)

    @classmethod
    def usage_event(cls, usage: Usage, response_id: str | None = None, model: str | None = None) -> StreamEvent:
        """``StreamEvent(type="usage", usage=usage, response_id=response_id, model=model)``, built without
        validation when ``usage`` is a ``Usage`` that validating again would leave as it is (``settled``) and the
        ids are ``str`` or ``None``; validated as usual otherwise. Equal to the validated event in every way, and
        holding the same ``usage`` object, as validation does."""
        if type(usage) is Usage and settled(usage):
            return cls._settled_usage_event(usage, response_id, model)
        return cls(type="usage", usage=usage, response_id=response_id, model=model)

    @classmethod
    def usage_totals(
        cls,
        input_tokens: Any,
        output_tokens: Any,
        total_tokens: Any,
        response_id: str | None = None,
        model: str | None = None,
    ) -> StreamEvent:
        """``usage_event(Usage.totals(input_tokens, output_tokens, total_tokens), response_id, model)``: the usage a
        streamed chunk most often reports, checked once (what ``Usage.totals`` returns is settled)."""
        return cls._settled_usage_event(Usage.totals(input_tokens, output_tokens, total_tokens), response_id, model)

    @classmethod
    def usage_of(cls, counts: dict[str, Any], response_id: str | None = None, model: str | None = None) -> StreamEvent:
        """``usage_event(Usage.of(counts), response_id, model)``, its usage checked once (what ``Usage.of`` returns,
        built or validated, is settled); raises what ``Usage.of`` raises."""
        return cls._settled_usage_event(Usage.of(counts), response_id, model)

    @classmethod
    def _settled_usage_event(cls, usage: Usage, response_id: str | None, model: str | None) -> StreamEvent:
        """The event of a settled ``usage``: without validation when the ids are ``str`` or ``None``."""
        if (response_id is None or type(response_id) is str) and (model is None or type(model) is str):
            values = _USAGE_DEFAULTS.copy()
            values["usage"], values["response_id"], values["model"] = usage, response_id, model
            return assembled(cls, values, {"type", "usage", "response_id", "model"})
        return cls(type="usage", usage=usage, response_id=response_id, model=model)

    @classmethod
    def response_event(cls, response: Response) -> StreamEvent:
        """``StreamEvent(type="response", response=response)``, the last event of every stream: built without
        validating ``response`` again when it is a ``Response`` (validation keeps that instance as it is);
        validated as usual otherwise."""
        if type(response) is not Response:
            return cls(type="response", response=response)
        return assembled(cls, {**_RESPONSE_DEFAULTS, "response": response}, {"type", "response"})

    @classmethod
    def finish_event(cls, finish_reason: Any, response_id: str | None = None, model: str | None = None) -> StreamEvent:
        """``StreamEvent(type="finish", finish_reason=finish_reason, response_id=response_id, model=model)``, the
        event every stream ends with: built without validation when ``finish_reason`` is one of ``FinishReason``'s
        strings and the ids are ``str`` or ``None``; validated as usual otherwise (raising what validation raises).
        Equal to the validated event in every way (fields, fields set, ``==``, hash, dump)."""
        if (
            type(finish_reason) is str
            and finish_reason in _FINISH_REASONS
            and (response_id is None or type(response_id) is str)
            and (model is None or type(model) is str)
        ):
            values = _FINISH_DEFAULTS.copy()
            values["finish_reason"], values["response_id"], values["model"] = finish_reason, response_id, model
            return assembled(cls, values, {"type", "finish_reason", "response_id", "model"})
        return cls(type="finish", finish_reason=finish_reason, response_id=response_id, model=model)


_TEXT_DEFAULTS: dict[str, Any] = {
    name: "text" if field.is_required() else field.default for name, field in StreamEvent.model_fields.items()
}
"""Every field of a text event, in the fields' order (as validation puts them): ``type`` (the one required field)
``"text"``, the rest their defaults."""
_USAGE_DEFAULTS: dict[str, Any] = {**_TEXT_DEFAULTS, "type": "usage"}
"""Every field of a usage event, in the fields' order: ``type`` ``"usage"``, the rest their defaults."""
_FINISH_DEFAULTS: dict[str, Any] = {**_TEXT_DEFAULTS, "type": "finish"}
"""Every field of a finish event, in the fields' order: ``type`` ``"finish"``, the rest their defaults."""
_RESPONSE_DEFAULTS: dict[str, Any] = {**_TEXT_DEFAULTS, "type": "response"}
"""Every field of a stream's last event, in the fields' order: ``type`` ``"response"``, the rest their defaults."""
_FINISH_REASONS = frozenset(get_args(FinishReason))


@dataclass
class StreamState:
    """Scratch space a provider keeps across the raw events of one stream.

    ``usage_so_far`` is the usage reported so far that no event has handed on yet, as a function building its
    usage event: a parser whose provider repeats the usage on every chunk (Gemini) keeps the latest there instead
    of building an event a chunk, and clears it once an event hands it on. Core builds what is left when the
    stream ends (handed on before the last event) or is cut off (counted as what it spent).
    """

    request: Request
    data: dict[str, Any] = field(default_factory=dict)
    usage_so_far: Callable[[], StreamEvent] | None = None
