"""Streamed ``GenerateContentResponse`` chunks → core ``StreamEvent``s.

Each chunk carries new text, whole function calls, the usage so far and, on the
last one, the finish reason. ``state.data["gemini_calls"]`` counts the calls
seen, so each gets its own index and the finish reason knows about them;
``state.data["gemini_parts"]`` gathers every part, so that the turn's thoughts
and signatures come whole, as a ``reasoning`` event, with the finish reason.
"""

from __future__ import annotations

import json
from typing import Any

from llmplex.types import StreamEvent, StreamState
from llmplex_gemini import plain
from llmplex_gemini.response import call_id, check_blocked, finish_reason, read_candidate, usage_from
from llmplex_gemini.thoughts import reasoning_of

__all__ = ["parse_chunk"]

_CALLS = "gemini_calls"
_PARTS = "gemini_parts"


def parse_chunk(chunk: Any, state: StreamState) -> list[StreamEvent]:
    """The core events of one chunk (the SDK's model, or the lean stream's plain ``dict``); a policy block
    raises ``LLMRefusalError``."""
    if type(chunk) is dict:
        get = chunk.get
        model, response_id, candidates = get("modelVersion"), get("responseId"), get("candidates")
        candidate = candidates[0] if candidates else None
        reason: Any = None
        parts: Any = None
        if candidate is not None:
            reason = candidate.get("finishReason")
            if reason is not None:  # only a finish reason can be a block
                plain.check_blocked(chunk, model or state.request.model)
            content = candidate.get("content")
            parts = content.get("parts") if content is not None else None
        events: list[StreamEvent] = []
        calls: list[tuple[str | None, str, str]] = []
        for part in parts or ():  # ``plain.read_candidate``, its texts made events as they are read
            call = part.get("functionCall")
            if call is not None:
                calls.append((call.get("id"), call.get("name") or "", json.dumps(call.get("args") or {})))
            elif part.get("text") and not part.get("thought"):
                events.append(StreamEvent.text_delta(part["text"], response_id, model))
        metadata = get("usageMetadata")
        usage = None if metadata is None else plain.usage_from(metadata)
    else:
        model, response_id = chunk.model_version, chunk.response_id
        check_blocked(chunk, model or state.request.model)
        candidate = chunk.candidates[0] if chunk.candidates else None
        said = read_candidate(candidate)
        events = [StreamEvent.text_delta(text, response_id, model) for text in said.texts]
        calls = list(said.calls)
        parts = candidate.content.parts if candidate is not None and candidate.content is not None else None
        usage = None if chunk.usage_metadata is None else usage_from(chunk.usage_metadata)
        reason = candidate.finish_reason if candidate is not None else None
    if parts:
        state.data.setdefault(_PARTS, []).extend(parts)
    for given_id, name, arguments in calls:
        index = state.data[_CALLS] = state.data.get(_CALLS, -1) + 1
        events.append(
            StreamEvent(
                type="tool_call",
                tool_call_index=index,
                tool_call_id=call_id(given_id, index),
                tool_name=name,
                arguments_delta=arguments,
                response_id=response_id,
                model=model,
            )
        )
    if usage is not None:
        events.append(StreamEvent.usage_event(usage, response_id, model))
    if reason is not None:
        reasoning = reasoning_of(state.data.pop(_PARTS, ()))
        if reasoning is not None:
            events.append(StreamEvent(type="reasoning", reasoning=reasoning, response_id=response_id, model=model))
        finish = finish_reason(reason, _CALLS in state.data)
        events.append(StreamEvent.finish_event(finish, response_id, model))
    return events
