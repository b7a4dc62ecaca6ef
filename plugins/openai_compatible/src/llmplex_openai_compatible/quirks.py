"""The small hooks a preset applies around the openai plugin's Chat Completions translation.

- ``format_request``: refuse what the API refuses (by name, before anything is
  sent), rename and drop fields, rewrite tool-call ids to the API's format, add
  OpenRouter's provider routing.
- ``reasoning_of`` / ``reasoning_events``: a reasoning model's thinking, sent in
  the message's ``reasoning_content`` (DeepSeek, xAI, vLLM, LM Studio) or
  ``reasoning`` field (OpenRouter, Groq, Ollama), as reasoning parts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from llmplex_openai import chat

from llmplex.errors import LLMConfigurationError
from llmplex.types import ReasoningPart, Request, StreamEvent, StreamState
from llmplex_openai_compatible.settings import CompatibleSettings, OpenRouterSettings

__all__ = ["REASONING_FIELDS", "REASONING_FORMAT", "alnum9", "format_request", "reasoning_events", "reasoning_of"]

REASONING_FIELDS = ("reasoning_content", "reasoning")
"""The message (and delta) fields OpenAI-compatible servers put a reasoning model's thinking in."""
REASONING_FORMAT = "openai-compatible"
"""``ReasoningPart.format`` of that thinking; no preset replays it (DeepSeek answers 400 when it is sent back)."""

_ALNUM9 = re.compile(r"[A-Za-z0-9]{9}")
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def alnum9(call_id: str) -> str:
    """``call_id`` as a 9-character ``[a-zA-Z0-9]`` id: kept when it already is one, else derived from its
    hash, so a call and its result keep matching ids."""
    if _ALNUM9.fullmatch(call_id):
        return call_id
    number = int.from_bytes(hashlib.sha256(call_id.encode()).digest()[:8], "big")
    digits = []
    for _ in range(9):
        number, digit = divmod(number, 62)
        digits.append(_BASE62[digit])
    return "".join(digits)


def _refuse(settings: CompatibleSettings, request: Request) -> None:
    preset = settings.preset
    options = request.config.set_options()
    refused = settings.refused(request.model) if options else frozenset()  # no option set: none to look up
    for option in options:
        if option in refused:
            raise LLMConfigurationError(
                f"{preset.title} does not take option {option!r} for model {request.model!r} (see {preset.docs}); "
                "leave it out. Nothing was sent."
            )
    if not request.provider_options:
        return
    fields = preset.refused_fields | settings.refused_fields
    for name, value in request.provider_options.items():
        if name in fields and not (name == "n" and value == 1):
            raise LLMConfigurationError(
                f"{preset.title} answers 400 for the request field {name!r} (see {preset.docs}); "
                "remove it from provider_options. Nothing was sent."
            )


def _rewrite_ids(messages: list[dict[str, Any]]) -> None:
    for message in messages:
        if message.get("tool_call_id"):
            message["tool_call_id"] = alnum9(message["tool_call_id"])
        for call in message.get("tool_calls") or ():
            call["id"] = alnum9(call["id"])


def format_request(request: Request, settings: CompatibleSettings) -> dict[str, Any]:
    """The Chat Completions body as this provider's API takes it; ``LLMConfigurationError`` naming what it
    refuses."""
    _refuse(settings, request)
    preset = settings.preset
    payload = chat.format_chat_request(request, max_tokens_key="max_tokens")
    for core_name, wire_name in preset.renamed.items():
        if core_name in payload:
            payload[wire_name] = payload.pop(core_name)
    for name in preset.dropped_fields:
        payload.pop(name, None)
    if settings.id_format == "alnum9":
        _rewrite_ids(payload["messages"])
    if isinstance(settings, OpenRouterSettings) and settings.provider_routing:
        payload.setdefault("provider", settings.provider_routing)
    return payload


def _field(item: Any, name: str) -> Any:
    if type(item) is dict:  # the lean stream's decoded JSON, several times per chunk: no ABC check
        return item.get(name)
    if isinstance(item, Mapping):
        return item.get(name)
    value = getattr(item, name, None)
    if value is None:
        extra = getattr(item, "model_extra", None) or {}
        value = extra.get(name)
    return value


def _thinking(item: Any) -> tuple[str, str] | None:
    for name in REASONING_FIELDS:
        value = _field(item, name)
        if isinstance(value, str) and value:
            return name, value
    return None


def reasoning_of(message: Any) -> tuple[ReasoningPart, ...]:
    """The thinking a whole answer's message carries, as one reasoning part (none without any)."""
    found = _thinking(message)
    if found is None:
        return ()
    name, text = found
    return (ReasoningPart(format=REASONING_FORMAT, text=text, data={name: text}),)


def reasoning_events(chunk: Any, state: StreamState) -> list[StreamEvent]:
    """The thinking delta of one stream chunk as a ``reasoning`` event, and the whole part when the choice
    finishes."""
    choices = _field(chunk, "choices") or ()
    if not choices:
        return []
    choice = choices[0]
    delta = choice.get("delta") if type(choice) is dict and choice.get("finish_reason") is None else None
    if type(delta) is dict:  # the lean path's common chunk, read at once: no thinking in it, nothing to end
        for name in REASONING_FIELDS:
            if delta.get(name):
                break
        else:
            return []
    events: list[StreamEvent] = []
    found = _thinking(_field(choice, "delta") or {})
    if found is not None:
        state.data.setdefault("reasoning", []).append(found[1])
        state.data["reasoning_field"] = found[0]
        events.append(StreamEvent(type="reasoning", text=found[1]))
    if _field(choice, "finish_reason") is not None and state.data.get("reasoning"):
        text = "".join(state.data.pop("reasoning"))
        part = ReasoningPart(format=REASONING_FORMAT, text=text, data={state.data["reasoning_field"]: text})
        events.append(StreamEvent(type="reasoning", reasoning=part))
    return events
