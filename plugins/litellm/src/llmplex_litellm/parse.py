"""LiteLLM's ``ModelResponse`` and stream chunks → core Response and StreamEvents."""

from __future__ import annotations

from typing import Any

from llmplex.types import FinishReason, Request, Response, StreamEvent, StreamState, ToolCall, Usage

__all__ = ["finish_reason", "parse_chunk", "parse_response", "usage"]

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "tool_use": "tool_calls",
    "content_filter": "content_filter",
    "refusal": "refusal",
    "error": "error",
}


def finish_reason(raw: str | None, has_tool_calls: bool = False) -> FinishReason:
    """LiteLLM's finish reason (OpenAI names, sometimes the provider's own) in core terms."""
    if raw is None:
        return "tool_calls" if has_tool_calls else "stop"
    return _FINISH.get(raw, "other")


def _count(value: Any) -> Any:
    """A reported count as given (core's ``Usage`` refuses what is not a count); absent is 0."""
    return 0 if value is None else value


def usage(raw: Any) -> Usage:
    """LiteLLM's OpenAI-style ``Usage`` as core Usage, each bucket apart (cache reads and writes, the 1-hour
    writes, reasoning, audio in and out) to be priced at its own rate (``None``: unknown usage)."""
    if raw is None:
        return Usage.unreported()
    prompt_details = getattr(raw, "prompt_tokens_details", None)
    completion_details = getattr(raw, "completion_tokens_details", None)
    by_ttl = getattr(prompt_details, "cache_creation_token_details", None)  # Anthropic's 5-minute and 1-hour writes
    return Usage(
        input_tokens=_count(getattr(raw, "prompt_tokens", 0)),
        output_tokens=_count(getattr(raw, "completion_tokens", 0)),
        total_tokens=_count(getattr(raw, "total_tokens", 0)),
        cached_tokens=_count(getattr(prompt_details, "cached_tokens", 0)),
        cache_write_tokens=_count(getattr(raw, "cache_creation_input_tokens", 0)),
        cache_write_1h_tokens=_count(getattr(by_ttl, "ephemeral_1h_input_tokens", 0)),
        reasoning_tokens=_count(getattr(completion_details, "reasoning_tokens", 0)),
        input_audio_tokens=_count(getattr(prompt_details, "audio_tokens", 0)),
        output_audio_tokens=_count(getattr(completion_details, "audio_tokens", 0)),
    )


def _tool_calls(raw_calls: Any) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(id=c.id or f"call_{i}", name=c.function.name or "", arguments=c.function.arguments or "{}")
        for i, c in enumerate(raw_calls or ())
    )


def _refusal(message: Any) -> str | None:
    """The model's refusal: LiteLLM moves OpenAI's ``refusal`` into ``provider_specific_fields``."""
    extra = getattr(message, "provider_specific_fields", None) or {}
    refusal = getattr(message, "refusal", None) or extra.get("refusal")
    return refusal if isinstance(refusal, str) and refusal else None


def parse_response(raw: Any, request: Request) -> Response:
    """One ``ModelResponse``; structured output stays in ``text`` for core to parse and validate."""
    choice = raw.choices[0]
    message = choice.message
    calls = _tool_calls(getattr(message, "tool_calls", None))
    refusal = _refusal(message)
    reason = finish_reason(choice.finish_reason, bool(calls))
    return Response(
        text=message.content or "",
        tool_calls=calls,
        finish_reason="refusal" if refusal and reason == "stop" else reason,
        usage=usage(getattr(raw, "usage", None)),
        model=raw.model or request.model,
        response_id=raw.id,
        refusal=refusal,
        raw=raw,
    )


def _tool_call_events(delta: Any, response_id: str | None) -> list[StreamEvent]:
    events = []
    for piece in getattr(delta, "tool_calls", None) or ():
        function = piece.function
        events.append(
            StreamEvent(
                type="tool_call",
                tool_call_index=piece.index or 0,
                tool_call_id=piece.id,
                tool_name=getattr(function, "name", None),
                arguments_delta=getattr(function, "arguments", None) or "",
                response_id=response_id,
            )
        )
    return events


def parse_chunk(chunk: Any, state: StreamState) -> list[StreamEvent]:
    """One ``ModelResponseStream`` chunk: text and tool-call deltas, finish reason, usage."""
    rid, model = chunk.id, chunk.model
    events: list[StreamEvent] = []
    for choice in chunk.choices or ():
        delta = choice.delta
        if delta is not None:
            if delta.content:
                events.append(StreamEvent(type="text", text=delta.content, response_id=rid, model=model))
            calls = _tool_call_events(delta, rid)
            state.data["tool_calls"] = state.data.get("tool_calls", False) or bool(calls)
            events += calls
        if choice.finish_reason:
            reason = finish_reason(choice.finish_reason, state.data.get("tool_calls", False))
            events.append(StreamEvent(type="finish", finish_reason=reason, response_id=rid, model=model))
    chunk_usage = getattr(chunk, "usage", None)
    if chunk_usage is not None:
        events.append(StreamEvent(type="usage", usage=usage(chunk_usage), response_id=rid))
    return events
