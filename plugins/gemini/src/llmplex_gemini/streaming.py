"""Streamed ``GenerateContentResponse`` chunks → core ``StreamEvent``s.

Each chunk carries new text, whole function calls, the usage so far and, on the
last one, the finish reason. ``state.data["gemini_calls"]`` counts the calls
seen, so each gets its own index and the finish reason knows about them;
``state.data["gemini_parts"]`` gathers every part, so that the turn's thoughts
and signatures come whole, as a ``reasoning`` event, with the finish reason.
"""

from __future__ import annotations

from typing import Any

from llmplex.types import StreamEvent, StreamState
from llmplex_gemini.response import call_id, check_blocked, finish_reason, read_candidate, usage_from
from llmplex_gemini.thoughts import reasoning_of

__all__ = ["parse_chunk"]

_CALLS = "gemini_calls"
_PARTS = "gemini_parts"


def parse_chunk(chunk: Any, state: StreamState) -> list[StreamEvent]:
    """The core events of one chunk; a policy block raises ``LLMRefusalError``."""
    check_blocked(chunk, chunk.model_version or state.request.model)
    common = {"response_id": chunk.response_id, "model": chunk.model_version}
    candidate = chunk.candidates[0] if chunk.candidates else None
    said = read_candidate(candidate)
    if candidate is not None and candidate.content is not None:
        state.data.setdefault(_PARTS, []).extend(candidate.content.parts or ())
    events = [StreamEvent(type="text", text=text, **common) for text in said.texts]
    for given_id, name, arguments in said.calls:
        index = state.data[_CALLS] = state.data.get(_CALLS, -1) + 1
        events.append(
            StreamEvent(
                type="tool_call",
                tool_call_index=index,
                tool_call_id=call_id(given_id, index),
                tool_name=name,
                arguments_delta=arguments,
                **common,
            )
        )
    if chunk.usage_metadata is not None:
        events.append(StreamEvent(type="usage", usage=usage_from(chunk.usage_metadata), **common))
    if candidate is not None and candidate.finish_reason is not None:
        reasoning = reasoning_of(state.data.pop(_PARTS, ()))
        if reasoning is not None:
            events.append(StreamEvent(type="reasoning", reasoning=reasoning, **common))
        reason = finish_reason(candidate.finish_reason, _CALLS in state.data)
        events.append(StreamEvent(type="finish", finish_reason=reason, **common))
    return events
