"""Streamed ``GenerateContentResponse`` chunks → core ``StreamEvent``s.

Each chunk carries new text, whole function calls, the usage so far and, on the
last one, the finish reason. The usage so far is kept as ``state.usage_so_far``,
not made an event a chunk: its one usage event comes with the finish reason (or
from core, at the stream's end or cut-off). ``state.data["gemini_calls"]``
counts the calls seen, so each gets its own index and the finish reason knows
about them; ``state.data["gemini_parts"]`` gathers every part, so that the
turn's thoughts and signatures come whole, as a ``reasoning`` event, with the
finish reason (read only when ``state.data["gemini_carried"]`` says a part was one).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import partial
from typing import Any

from llmplex.types import StreamEvent, StreamState
from llmplex_gemini import plain
from llmplex_gemini.response import call_id, check_blocked, finish_reason, read_candidate, usage_from
from llmplex_gemini.thoughts import any_carried, reasoning_of

__all__ = ["parse_chunk"]

_text_delta = StreamEvent.text_delta
"""Bound once: the text event of nearly every chunk."""

_CALLS = "gemini_calls"
_PARTS = "gemini_parts"
_CARRIED = "gemini_carried"


def parse_chunk(chunk: Any, state: StreamState) -> list[StreamEvent]:
    """The core events of one chunk (the lean stream's ``chunks.TextChunk`` or plain ``dict``, or the SDK's model);
    a policy block raises ``LLMRefusalError``. A ``TextChunk`` comes read (its text events built), a plain ``dict``
    is read here (its texts made events as they are read), the SDK's model by ``_model_chunk``; what a
    ``TextChunk`` or a ``dict`` holds is then kept in ``state`` here (this runs for every chunk of a lean stream,
    so with no call in between)."""
    events: list[StreamEvent]
    calls: list[tuple[str | None, str, str]] | None = None
    if type(chunk) is tuple:  # a TextChunk: the common chunk, read by the lean stream
        events, parts, carried, metadata, reason, response_id, model, raw = chunk
        if reason is not None:  # only a finish reason can be a block
            plain.check_blocked(raw, model or state.request.model)
    elif type(chunk) is not dict:
        return _model_chunk(chunk, state)
    else:
        get = chunk.get
        model, response_id, candidates = get("modelVersion"), get("responseId"), get("candidates")
        events, parts, carried, reason = [], None, False, None
        if candidates:
            candidate = candidates[0]
            if (reason := candidate.get("finishReason")) is not None:  # only a finish reason can be a block
                plain.check_blocked(chunk, model or state.request.model)
            content = candidate.get("content")
            parts = content.get("parts") if content is not None else None
            for part in parts or ():
                if len(part) == 1 and (text := part.get("text")):  # a text part and nothing else: nearly every one
                    events.append(_text_delta(text, response_id, model))
                    continue
                call = part.get("functionCall")
                thought = part.get("thought")
                if thought or part.get("thoughtSignature"):  # the end reads the parts for reasoning
                    carried = True
                if call is not None:
                    calls = calls or []
                    calls.append((call.get("id"), call.get("name") or "", json.dumps(call.get("args") or {})))
                elif not thought and (text := part.get("text")):
                    events.append(_text_delta(text, response_id, model))
        metadata = get("usageMetadata")
    if parts:
        data = state.data
        gathered = data.get(_PARTS)
        if gathered is None:
            data[_PARTS] = list(parts)
        else:
            gathered.extend(parts)
        if carried:
            data[_CARRIED] = True
    if calls:
        _add_calls(events, calls, state, response_id, model)
    if metadata is not None:  # the latest usage, kept in the stream's one holder (no function made a chunk)
        kept = state.usage_so_far
        if type(kept) is not _PlainUsage:
            kept = state.usage_so_far = _PlainUsage()
        kept.metadata, kept.response_id, kept.model = metadata, response_id, model
    if reason is not None:
        _add_finish(events, reason, state, response_id, model)
    return events


class _PlainUsage:
    """``state.usage_so_far`` of plain chunks: the latest chunk's ``usageMetadata`` and ids, its usage event built
    (``plain.usage_event``) only when asked: one per stream, updated by each chunk that reports usage (a new one
    after a finish reason handed it on)."""

    __slots__ = ("metadata", "model", "response_id")

    metadata: dict[str, Any]
    response_id: str | None
    model: str | None

    def __call__(self) -> StreamEvent:
        return plain.usage_event(self.metadata, self.response_id, self.model)


def _model_chunk(chunk: Any, state: StreamState) -> list[StreamEvent]:
    """``parse_chunk`` of the SDK's ``GenerateContentResponse``."""
    model, response_id = chunk.model_version, chunk.response_id
    check_blocked(chunk, model or state.request.model)
    candidate = chunk.candidates[0] if chunk.candidates else None
    said = read_candidate(candidate)
    events = [StreamEvent.text_delta(text, response_id, model) for text in said.texts]
    parts = candidate.content.parts if candidate is not None and candidate.content is not None else None
    if parts:
        state.data.setdefault(_PARTS, []).extend(parts)
        if any_carried(parts):
            state.data[_CARRIED] = True
    if said.calls:
        _add_calls(events, said.calls, state, response_id, model)
    if chunk.usage_metadata is not None:
        state.usage_so_far = partial(_sdk_usage_event, chunk.usage_metadata, response_id, model)
    if candidate is not None and candidate.finish_reason is not None:
        _add_finish(events, candidate.finish_reason, state, response_id, model)
    return events


def _sdk_usage_event(metadata: Any, response_id: str | None, model: str | None) -> StreamEvent:
    """The usage event of an SDK chunk's ``usage_metadata``."""
    return StreamEvent.usage_event(usage_from(metadata), response_id, model)


def _add_calls(
    events: list[StreamEvent],
    calls: Iterable[tuple[str | None, str, str]],
    state: StreamState,
    response_id: str | None,
    model: str | None,
) -> None:
    """A ``tool_call`` event per whole call, each with the next index of the stream."""
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


def _add_finish(
    events: list[StreamEvent], reason: Any, state: StreamState, response_id: str | None, model: str | None
) -> None:
    """The usage so far as an event, the turn's reasoning (its thoughts and signatures, whole, when a part was
    one), then the finish event."""
    report = state.usage_so_far
    if report is not None:
        state.usage_so_far = None
        events.append(report())
    parts = state.data.pop(_PARTS, ())
    reasoning = reasoning_of(parts) if state.data.pop(_CARRIED, False) else None
    if reasoning is not None:
        events.append(StreamEvent(type="reasoning", reasoning=reasoning, response_id=response_id, model=model))
    events.append(StreamEvent.finish_event(finish_reason(reason, _CALLS in state.data), response_id, model))
