"""Anthropic Messages API payloads shaped like the documented ones, and the SDK-type contract checks.

Responses, stream events and error bodies follow
https://docs.anthropic.com/en/api/messages, /messages-streaming and /errors.
``check_create_params`` validates a payload against the SDK's own
``MessageCreateParams`` TypedDicts; ``check_message`` parses a response with the
SDK's ``Message`` model.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from anthropic.types import Message, RawMessageStreamEvent
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming, MessageCreateParamsStreaming
from pydantic import TypeAdapter

from tests.plugins.anthropic.fake_http import sse

__all__ = [
    "MODEL",
    "check_create_params",
    "check_message",
    "check_params",
    "error_body",
    "message",
    "stream_body",
    "text_block",
    "tool_use_block",
    "usage",
]

MODEL = "claude-sonnet-4-6"


@functools.cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    """Built on first use: the SDK's request unions take seconds to compile."""
    return TypeAdapter(kind)


def _materialized(value: Any) -> Any:
    """Validated TypedDict data with its lazy ``Iterable`` fields read (which validates them too)."""
    if isinstance(value, Mapping):
        return {k: _materialized(v) for k, v in value.items()}
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, Sequence) or type(value).__name__ == "ValidatorIterator":
        return [_materialized(v) for v in value]
    return value


def check_params(payload: Mapping[str, Any], kind: Any) -> None:
    """Fail unless ``payload`` is valid for the SDK's TypedDict ``kind`` with no key the SDK types lack.

    Pydantic ignores unknown TypedDict keys, so the validated copy must equal the input.
    """
    body = json.loads(json.dumps(payload))
    validated = _materialized(_adapter(kind).validate_python(body))
    assert validated == body, f"keys or values the SDK types do not know:\n{validated}\n!=\n{body}"


def check_create_params(payload: Mapping[str, Any], *, stream: bool = False) -> None:
    """Fail unless ``payload`` is valid ``MessageCreateParams`` with no key the SDK types lack."""
    check_params(payload, MessageCreateParamsStreaming if stream else MessageCreateParamsNonStreaming)


def check_message(body: Mapping[str, Any]) -> Message:
    """Parse a response fixture with the SDK's strict response model."""
    return Message.model_validate(body)


def check_stream_event(data: Mapping[str, Any]) -> None:
    """Parse one stream event fixture with the SDK's event union."""
    _adapter(RawMessageStreamEvent).validate_python(data)


def usage(
    input_tokens: int = 12, output_tokens: int = 6, *, cache_read: int = 0, cache_creation: int = 0
) -> dict[str, Any]:
    """A usage object as the API reports it."""
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache_creation,
        "cache_read_input_tokens": cache_read,
        "cache_creation": {"ephemeral_5m_input_tokens": cache_creation, "ephemeral_1h_input_tokens": 0},
        "server_tool_use": None,
        "service_tier": "standard",
    }


def text_block(text: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": text, "citations": None}


def tool_use_block(
    name: str, tool_input: Mapping[str, Any], block_id: str = "toolu_01A09q90qw90lq917835lq9"
) -> dict[str, Any]:
    """A tool_use content block."""
    return {"type": "tool_use", "id": block_id, "name": name, "input": dict(tool_input)}


def message(
    content: Sequence[Mapping[str, Any]] = (),
    *,
    stop_reason: str | None = "end_turn",
    message_usage: Mapping[str, Any] | None = None,
    model: str = MODEL,
    message_id: str = "msg_01XFDUDYJgAACzvnptvVoYEL",
    stop_details: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A Messages API response body."""
    body = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [dict(block) for block in content] or [text_block("Hello!")],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": dict(message_usage or usage()),
    }
    if stop_details is not None:
        body["stop_details"] = dict(stop_details)
    check_message(body)
    return body


def error_body(error_type: str, message_text: str, request_id: str = "req_011CSHoEeqs5C35K2UUqR7Fy") -> dict[str, Any]:
    """An error response body."""
    return {"type": "error", "error": {"type": error_type, "message": message_text}, "request_id": request_id}


def message_start(start_usage: Mapping[str, Any], *, model: str, message_id: str) -> dict[str, Any]:
    """A stream's ``message_start`` event: the message so far (no content yet) and the usage it starts with."""
    return {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": dict(start_usage),
        },
    }


def stream_body(
    blocks: Sequence[Mapping[str, Any]],
    *,
    stop_reason: str = "end_turn",
    start_usage: Mapping[str, Any] | None = None,
    output_tokens: int = 15,
    model: str = MODEL,
    message_id: str = "msg_01StreamedAnswer",
) -> bytes:
    """The SSE body of a streamed answer.

    ``blocks`` items are ``{"text": [deltas...]}``, ``{"tool_use": (id, name), "json": [partial_json...]}`` or
    ``{"thinking": [deltas...], "signature": SIGNATURE}`` (a signed thinking block).
    """
    events: list[tuple[str | None, dict[str, Any]]] = [
        (
            "message_start",
            message_start(start_usage or {"input_tokens": 25, "output_tokens": 1}, model=model, message_id=message_id),
        ),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(blocks):
        if "text" in block:
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": t} for t in block["text"]]
        elif "thinking" in block:
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": t} for t in block["thinking"]]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        else:
            call_id, name = block["tool_use"]
            start = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": j} for j in block["json"]]
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    for _, data in events:
        if data["type"] != "ping":
            check_stream_event(data)
    return sse(events)
