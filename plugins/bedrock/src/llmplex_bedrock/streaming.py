"""ConverseStream events (the dicts botocore decodes from the event stream) → core ``StreamEvent``s.

Each event is a one-key dict: ``messageStart``, ``contentBlockStart`` (a tool
use's id and name), ``contentBlockDelta`` (text, or a piece of a tool use's
JSON input), ``contentBlockStop``, ``messageStop`` (the stop reason) and
``metadata`` (usage). A tool call's index is its content block's index, so
parallel calls never mix.
"""

from __future__ import annotations

from typing import Any

from llmplex.types import StreamEvent, StreamState
from llmplex_bedrock.response import check_refused, finish_reason, usage_from

__all__ = ["parse_event"]

_TEXT = "bedrock_text"


def parse_event(event: Any, state: StreamState) -> list[StreamEvent]:
    """The core events of one ConverseStream event; a guardrail stop raises ``LLMRefusalError``."""
    if "contentBlockDelta" in event:
        body = event["contentBlockDelta"]
        delta = body.get("delta") or {}
        if "text" in delta:
            state.data[_TEXT] = state.data.get(_TEXT, "") + delta["text"]
            return [StreamEvent(type="text", text=delta["text"])]
        if "toolUse" in delta:
            piece = delta["toolUse"].get("input", "")
            return [StreamEvent(type="tool_call", tool_call_index=body["contentBlockIndex"], arguments_delta=piece)]
        return []
    if "contentBlockStart" in event:
        body = event["contentBlockStart"]
        use = (body.get("start") or {}).get("toolUse")
        if use is None:
            return []
        return [
            StreamEvent(
                type="tool_call",
                tool_call_index=body["contentBlockIndex"],
                tool_call_id=use["toolUseId"],
                tool_name=use["name"],
            )
        ]
    if "messageStop" in event:
        stop_reason = event["messageStop"].get("stopReason")
        check_refused(stop_reason, state.data.get(_TEXT, ""), state.request.model)
        return [StreamEvent(type="finish", finish_reason=finish_reason(stop_reason))]
    if "metadata" in event:
        return [StreamEvent(type="usage", usage=usage_from(event["metadata"].get("usage")))]
    return []
