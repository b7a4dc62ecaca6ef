"""The CLI's result object and stream-json lines → core Response and StreamEvents.

Result (``--output-format json``, and the last ``stream-json`` line)::

    {"type": "result", "subtype": "success", "is_error": false, "result": "Hello",
     "stop_reason": "end_turn", "session_id": "...", "total_cost_usd": 0.000037,
     "usage": {"input_tokens": 12, "cache_read_input_tokens": 0, "output_tokens": 5, ...},
     "modelUsage": {"claude-haiku-4-5-20251001": {...}}, "structured_output": {...}?}

Text deltas arrive as ``{"type": "stream_event", "event": {"type": "content_block_delta",
"delta": {"type": "text_delta", "text": ...}}}`` (with ``--include-partial-messages``).
The cost (``total_cost_usd``) stays in ``Response.raw``.
"""

from __future__ import annotations

import json
from typing import Any

from llmplex.types import FinishReason, Request, Response, StreamEvent, StreamState, Usage

__all__ = ["parse_line", "parse_result"]

_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "stop",
    "max_tokens": "length",
    "refusal": "refusal",
}


def _int(value: Any) -> Any:
    """A reported count as given (core's ``Usage`` refuses what is not a count); absent is 0."""
    return 0 if value is None else value


def usage(result: dict[str, Any]) -> Usage:
    """Anthropic-style counts (cache reads and writes apart from input, the 1-hour writes among them) as core
    Usage."""
    raw = result.get("usage")
    if not isinstance(raw, dict):
        return Usage.unreported()
    cached = _int(raw.get("cache_read_input_tokens"))
    written = _int(raw.get("cache_creation_input_tokens"))
    by_ttl = raw.get("cache_creation")
    return Usage(
        input_tokens=_int(raw.get("input_tokens")) + cached + written,
        output_tokens=_int(raw.get("output_tokens")),
        cached_tokens=cached,
        cache_write_tokens=written,
        cache_write_1h_tokens=_int(by_ttl.get("ephemeral_1h_input_tokens")) if isinstance(by_ttl, dict) else 0,
    )


def model(result: dict[str, Any], fallback: str) -> str:
    """The model that answered: the first of ``modelUsage``, else the one asked for."""
    used = result.get("modelUsage")
    return next(iter(used), fallback) if isinstance(used, dict) and used else fallback


def text(result: dict[str, Any]) -> str:
    """The answer; the structured output as JSON when ``--json-schema`` was given."""
    if result.get("structured_output") is not None:
        return json.dumps(result["structured_output"])
    value = result.get("result")
    return value if isinstance(value, str) else ""


def finish_reason(result: dict[str, Any]) -> FinishReason:
    """``stop_reason`` in core terms."""
    return _FINISH.get(str(result.get("stop_reason")), "stop")


def parse_result(raw: dict[str, Any], request: Request) -> Response:
    """A successful result object as a core Response (``raw`` keeps cost, session, timings)."""
    reason = finish_reason(raw)
    answer = text(raw)
    return Response(
        text=answer,
        finish_reason=reason,
        usage=usage(raw),
        model=model(raw, request.model),
        response_id=raw.get("session_id"),
        refusal=answer if reason == "refusal" else None,
        raw=raw,
    )


def parse_line(line: dict[str, Any], state: StreamState) -> list[StreamEvent]:
    """One stream-json line: text deltas, and usage and finish from the final result."""
    kind = line.get("type")
    session = line.get("session_id")
    if kind == "stream_event":
        event = line.get("event") or {}
        if event.get("type") == "message_start":
            state.data["model"] = (event.get("message") or {}).get("model")
        delta = event.get("delta") or {}
        if event.get("type") == "content_block_delta" and delta.get("type") == "text_delta" and delta.get("text"):
            state.data["streamed_text"] = True
            return [StreamEvent(type="text", text=delta["text"], response_id=session, model=state.data.get("model"))]
        return []
    if kind != "result":
        return []
    events = []
    answer = text(line)
    if answer and (line.get("structured_output") is not None or not state.data.get("streamed_text")):
        events.append(StreamEvent(type="text", text=answer, response_id=session))
    used = model(line, state.data.get("model") or state.request.model)
    events.append(StreamEvent(type="usage", usage=usage(line), response_id=session, model=used))
    events.append(StreamEvent(type="finish", finish_reason=finish_reason(line), response_id=session))
    return events
