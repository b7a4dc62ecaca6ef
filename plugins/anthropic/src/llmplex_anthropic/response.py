"""A ``Message`` → core ``Response``; stop reasons and usage shared with streaming.

A message is the SDK's model (batch results, the SDK path) or the decoded JSON of
the lean path (``llmplex_anthropic.lean``); ``field`` reads either.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from llmplex.types import FinishReason, ReasoningPart, Request, Response, ToolCall, Usage
from llmplex_anthropic.thinking import reasoning_part

__all__ = [
    "CACHE_TTL_FIELDS",
    "USAGE_FIELDS",
    "field",
    "finish_reason",
    "is_output_tool",
    "parse_message",
    "usage_counts",
    "usage_fields",
    "usage_from",
    "usage_values",
]

_FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "refusal",
    "pause_turn": "other",
}


def field(value: Any, name: str) -> Any:
    """``value``'s member ``name``: a key of decoded JSON or an attribute of an SDK model (``None`` if absent)."""
    if isinstance(value, (dict, Mapping)):  # dict first: the hot case, and a cheap check
        return value.get(name)
    return getattr(value, name, None)


def is_output_tool(name: str, request: Request) -> bool:
    """Whether a tool_use block is the forced tool that carries structured output."""
    return request.output is not None and name == request.output.name and all(t.name != name for t in request.tools)


def finish_reason(stop_reason: str | None, has_tool_calls: bool) -> FinishReason:
    """Core's finish reason for an Anthropic ``stop_reason``.

    A ``tool_use`` stop caused only by the structured-output tool is a normal stop.
    """
    if stop_reason is None:
        return "tool_calls" if has_tool_calls else "stop"
    reason = _FINISH_REASONS.get(stop_reason, "other")
    if reason == "tool_calls" and not has_tool_calls:
        return "stop"
    return reason


USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
"""The token counts an SDK usage object (``Usage``, ``MessageDeltaUsage``) may carry."""

CACHE_TTL_FIELDS = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
"""The cache writes by lifetime, in a usage's ``cache_creation`` object (each priced at its own rate)."""


def usage_fields(usage: Any) -> dict[str, int | None]:
    """The counts a usage object (SDK model or decoded JSON) carries, its cache writes by lifetime included."""
    if type(usage) is dict:  # decoded JSON (the lean path, every stream's usage): no ``field`` call per count
        counts = {name: usage.get(name) for name in USAGE_FIELDS}
        creation = usage.get("cache_creation")
    else:
        counts = {name: field(usage, name) for name in USAGE_FIELDS}
        creation = field(usage, "cache_creation")
    if creation is not None:
        counts.update({name: field(creation, name) for name in CACHE_TTL_FIELDS})
    return counts


def usage_counts(counts: Mapping[str, int | None], details: Any = None) -> Usage:
    """Core usage: input counts cache reads and cache writes too; cached = cache reads, cache writes apart,
    and the 1-hour ones among the cache writes (they cost more than the 5-minute ones)."""
    return Usage.of(usage_values(counts, details))


def usage_values(counts: Mapping[str, int | None], details: Any = None) -> dict[str, Any]:
    """The core ``Usage`` fields of ``usage_counts``'s usage (for ``Usage.of``, or ``StreamEvent.usage_of``)."""
    return _values(
        counts.get("input_tokens"),
        counts.get("output_tokens"),
        counts.get("cache_read_input_tokens"),
        counts.get("cache_creation_input_tokens"),
        counts.get("ephemeral_5m_input_tokens"),
        counts.get("ephemeral_1h_input_tokens"),
        None if details is None else field(details, "thinking_tokens"),  # none (nearly always): no ABC check
    )


def _values(
    inputs: Any, outputs: Any, cache_read: Any, cache_creation: Any, five_minutes: Any, one_hour: Any, thinking: Any
) -> dict[str, Any]:
    cache_read = cache_read or 0
    one_hour = one_hour or 0
    cache_creation = cache_creation or (five_minutes or 0) + one_hour
    return {
        "input_tokens": (inputs or 0) + cache_read + cache_creation,
        "output_tokens": outputs or 0,
        "cached_tokens": cache_read,
        "cache_write_tokens": cache_creation,
        "cache_write_1h_tokens": one_hour,
        "reasoning_tokens": thinking or 0,
    }


def usage_from(usage: Any) -> Usage:
    """Core usage for a usage object (SDK model or decoded JSON); none at all is unknown usage."""
    if usage is None:
        return Usage.unreported()
    if type(usage) is not dict:
        return usage_counts(usage_fields(usage), field(usage, "output_tokens_details"))
    # decoded JSON (the lean path): read in place, no dict of its counts
    get, creation, details = usage.get, usage.get("cache_creation"), usage.get("output_tokens_details")
    return Usage.of(  # Usage(**counts), unvalidated when the counts are plain ints that fit (else validated)
        _values(
            get("input_tokens"),
            get("output_tokens"),
            get("cache_read_input_tokens"),
            get("cache_creation_input_tokens"),
            None if creation is None else field(creation, "ephemeral_5m_input_tokens"),
            None if creation is None else field(creation, "ephemeral_1h_input_tokens"),
            None if details is None else field(details, "thinking_tokens"),
        )
    )


def parse_message(message: Any, request: Request) -> Response:
    """The core response for one non-streamed ``Message`` (SDK model or decoded JSON)."""
    read = message.get if type(message) is dict else lambda name: field(message, name)  # decoded JSON: in place
    texts: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningPart] = []
    for block in read("content") or ():
        kind = field(block, "type")
        if kind == "text":
            texts.append(field(block, "text"))
        elif kind in ("thinking", "redacted_thinking"):
            reasoning.append(reasoning_part(block))
        elif kind == "tool_use" and is_output_tool(field(block, "name"), request):
            texts.append(json.dumps(field(block, "input")))
        elif kind == "tool_use":
            arguments = json.dumps(field(block, "input"))
            calls.append(ToolCall(id=field(block, "id"), name=field(block, "name"), arguments=arguments))
    reason = finish_reason(read("stop_reason"), bool(calls))
    return Response.of(
        text="".join(texts),
        tool_calls=tuple(calls),
        finish_reason=reason,
        usage=usage_from(read("usage")),
        model=read("model"),
        response_id=read("id"),
        refusal=_refusal(message) if reason == "refusal" else None,
        reasoning=tuple(reasoning),
        raw=message,
    )


def _refusal(message: Any) -> str:
    details = field(message, "stop_details")
    explanation = field(details, "explanation")
    category = field(details, "category")
    if explanation:
        return str(explanation)
    return f"the model refused ({category})" if category else "the model refused to answer"
