"""A Converse answer (the dict boto3 returns) → core ``Response``; pieces shared with streaming."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from llmplex.errors import LLMRefusalError
from llmplex.types import FinishReason, Request, Response, ToolCall, Usage

__all__ = ["check_refused", "finish_reason", "parse_response", "request_id", "usage_from"]

_FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "content_filtered": "content_filter",
    "guardrail_intervened": "content_filter",
}
_REFUSED = frozenset({"content_filtered", "guardrail_intervened"})
"""Stop reasons that mean Bedrock withheld the answer (a guardrail or the model's content filter)."""


def finish_reason(stop_reason: str | None) -> FinishReason:
    """Core's finish reason for a Converse ``stopReason``."""
    return _FINISH_REASONS.get(stop_reason or "end_turn", "other")


def check_refused(stop_reason: str | None, text: str, model: str | None) -> None:
    """Raise ``LLMRefusalError`` when a guardrail or content filter withheld the answer."""
    if stop_reason in _REFUSED:
        detail = text or f"the answer was withheld ({stop_reason})"
        raise LLMRefusalError(f"Bedrock withheld the answer ({stop_reason}): {detail}", refusal=detail, model=model)


def usage_from(usage: Mapping[str, Any] | None) -> Usage:
    """Core usage: Converse's ``inputTokens`` leaves out the cache reads and writes, core's input counts them."""
    if not usage:
        return Usage()
    read = usage.get("cacheReadInputTokens") or 0
    written = usage.get("cacheWriteInputTokens") or 0
    return Usage(
        input_tokens=(usage.get("inputTokens") or 0) + read + written,
        output_tokens=usage.get("outputTokens") or 0,
        cached_tokens=read,
        cache_write_tokens=written,
    )


def request_id(raw: Mapping[str, Any]) -> str | None:
    """The request id botocore read from ``x-amzn-RequestId``: Bedrock's only answer id."""
    metadata = raw.get("ResponseMetadata") or {}
    value = metadata.get("RequestId")
    return str(value) if value else None


def parse_response(raw: Mapping[str, Any], request: Request) -> Response:
    """The core response for one ``converse`` answer."""
    message = (raw.get("output") or {}).get("message") or {}
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in message.get("content") or ():
        if "text" in block:
            texts.append(block["text"])
        elif "toolUse" in block:
            use = block["toolUse"]
            calls.append(ToolCall(id=use["toolUseId"], name=use["name"], arguments=json.dumps(use.get("input", {}))))
    text = "".join(texts)
    stop_reason = raw.get("stopReason")
    check_refused(stop_reason, text, request.model)
    return Response(
        text=text,
        tool_calls=tuple(calls),
        finish_reason=finish_reason(stop_reason),
        usage=usage_from(raw.get("usage")),
        model=request.model,
        response_id=request_id(raw),
        raw=raw,
    )
