"""Raw Messages stream events → core ``StreamEvent``s.

Per stream, ``state.data`` keeps the message id and model (``message_start``),
the usage reported so far, and what each content block index carries: text,
a tool call (with its call index), the structured-output tool (whose JSON
input is streamed as text) or a thinking block, gathered until it stops and
then given whole as a ``reasoning`` event (its text deltas stream as they come).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llmplex.types import StreamEvent, StreamState
from llmplex_anthropic.response import finish_reason, is_output_tool, usage_counts, usage_fields
from llmplex_anthropic.thinking import reasoning_part

__all__ = ["parse_stream_event"]


@dataclass
class _Progress:
    response_id: str | None = None
    model: str | None = None
    usage: dict[str, int | None] = field(default_factory=dict)
    details: Any = None
    tool_blocks: dict[int, int] = field(default_factory=dict)
    output_blocks: set[int] = field(default_factory=set)
    thinking_blocks: dict[int, dict[str, Any]] = field(default_factory=dict)


def _progress(state: StreamState) -> _Progress:
    progress = state.data.get("anthropic")
    if progress is None:
        progress = state.data["anthropic"] = _Progress()
    return progress


def _merge_usage(progress: _Progress, usage: Any) -> None:
    """Later events repeat or extend the counts of earlier ones: keep the latest non-null value."""
    for name, value in usage_fields(usage).items():
        if value is not None:
            progress.usage[name] = value
    details = getattr(usage, "output_tokens_details", None)
    if details is not None:
        progress.details = details


def parse_stream_event(event: Any, state: StreamState) -> list[StreamEvent]:
    """The core events for one raw SDK stream event (``ping`` and block stops give none)."""
    progress = _progress(state)
    kind = event.type
    if kind == "message_start":
        progress.response_id = event.message.id
        progress.model = event.message.model
        _merge_usage(progress, event.message.usage)
        return []
    if kind == "content_block_start":
        return _block_start(event.index, event.content_block, progress, state)
    if kind == "content_block_delta":
        return _block_delta(event.index, event.delta, progress)
    if kind == "content_block_stop" and event.index in progress.thinking_blocks:
        part = reasoning_part(progress.thinking_blocks.pop(event.index))
        return [StreamEvent(type="reasoning", reasoning=part, response_id=progress.response_id)]
    if kind == "message_delta":
        _merge_usage(progress, event.usage)
        usage = usage_counts(progress.usage, progress.details)
        reason = finish_reason(event.delta.stop_reason, bool(progress.tool_blocks))
        return [
            StreamEvent(type="usage", usage=usage, response_id=progress.response_id, model=progress.model),
            StreamEvent(type="finish", finish_reason=reason, response_id=progress.response_id),
        ]
    return []


def _block_start(index: int, block: Any, progress: _Progress, state: StreamState) -> list[StreamEvent]:
    common = {"response_id": progress.response_id, "model": progress.model}
    if block.type == "text":
        return [StreamEvent(type="text", text=block.text, **common)] if block.text else []
    if block.type == "thinking":
        thinking, signature = getattr(block, "thinking", None), getattr(block, "signature", None)
        progress.thinking_blocks[index] = {"type": "thinking", "thinking": thinking or "", "signature": signature or ""}
        return []
    if block.type == "redacted_thinking":
        progress.thinking_blocks[index] = {"type": "redacted_thinking", "data": block.data}
        return []
    if block.type != "tool_use":
        return []
    if is_output_tool(block.name, state.request):
        progress.output_blocks.add(index)
        return []
    call_index = progress.tool_blocks[index] = len(progress.tool_blocks)
    return [
        StreamEvent(type="tool_call", tool_call_index=call_index, tool_call_id=block.id, tool_name=block.name, **common)
    ]


def _block_delta(index: int, delta: Any, progress: _Progress) -> list[StreamEvent]:
    rid = progress.response_id
    if delta.type == "text_delta":
        return [StreamEvent(type="text", text=delta.text, response_id=rid)] if delta.text else []
    thinking = progress.thinking_blocks.get(index)
    if thinking is not None and delta.type == "thinking_delta":
        thinking["thinking"] += delta.thinking
        return [StreamEvent(type="reasoning", text=delta.thinking, response_id=rid)] if delta.thinking else []
    if thinking is not None and delta.type == "signature_delta":
        thinking["signature"] += delta.signature
        return []
    if delta.type != "input_json_delta" or not delta.partial_json:
        return []
    if index in progress.output_blocks:
        return [StreamEvent(type="text", text=delta.partial_json, response_id=rid)]
    if index in progress.tool_blocks:
        return [
            StreamEvent(
                type="tool_call",
                tool_call_index=progress.tool_blocks[index],
                arguments_delta=delta.partial_json,
                response_id=rid,
            )
        ]
    return []
