"""The Anthropic Messages API wire for the conformance kit (``POST /v1/messages``), checked with the SDK's types."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from llmplex.testing import FakeError, Received, Reply, WireAdapter
from llmplex.testing.sent import SentMessage, SentRequest, SentTool, SentToolCall
from tests.plugins.anthropic import wire

__all__ = ["MessagesWire", "read_messages_request"]

ERRORS: Mapping[str, tuple[int | None, str]] = {
    "bad_request": (None, "invalid_request_error"),
    "authentication": (None, "authentication_error"),
    "forbidden": (None, "permission_error"),
    "not_found": (None, "not_found_error"),
    "request_timeout": (None, "timeout_error"),
    "conflict": (None, "invalid_request_error"),
    "too_large": (None, "request_too_large"),
    "unprocessable": (None, "invalid_request_error"),
    "rate_limit": (None, "rate_limit_error"),
    "quota": (402, "billing_error"),
    "server": (None, "api_error"),
    "unavailable": (None, "api_error"),
    "overloaded": (None, "overloaded_error"),
}
"""Error kind → the status the API answers with when it is not the kind's own, and the error type."""
STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use", "refusal": "refusal"}
"""Core finish reason → ``stop_reason``."""


def _usage(reply: Reply) -> dict[str, Any]:
    """Input tokens without cache reads, which the API counts apart; no reasoning count."""
    u = reply.usage
    return wire.usage(u.input_tokens - u.cached_tokens, u.output_tokens, cache_read=u.cached_tokens)


def _stop(reply: Reply) -> str:
    return "refusal" if reply.refusal else STOP.get(reply.finish, "end_turn")


def _content(reply: Reply) -> list[dict[str, Any]]:
    text = reply.refusal or reply.text
    blocks = [wire.text_block(text)] if text else []
    if reply.reasoning:  # a signed thinking block comes first, as extended thinking answers
        blocks.insert(0, {"type": "thinking", "thinking": "Thinking it over.", "signature": reply.reasoning})
    return blocks + [wire.tool_use_block(c.name, json.loads(c.arguments), c.id) for c in reply.tool_calls]


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(block.get("text", "") for block in content if block.get("type") == "text")
    return content or ""


def _turns(turn: Mapping[str, Any]) -> list[SentMessage]:
    """One API turn as core turns: a user turn's tool results are ``tool`` turns of their own."""
    content = turn.get("content")
    if turn["role"] == "assistant":
        blocks = content if isinstance(content, list) else []
        calls = tuple(SentToolCall(b["id"], b["name"], b["input"]) for b in blocks if b.get("type") == "tool_use")
        return [SentMessage("assistant", _text(content), calls)]
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    out = [
        SentMessage("tool", _text(b.get("content")), tool_call_id=b.get("tool_use_id"))
        for b in blocks
        if b.get("type") == "tool_result"
    ]
    text = [b for b in blocks if b.get("type") == "text"]
    return out + ([SentMessage("user", _text(text))] if text else [])


def read_messages_request(body: Mapping[str, Any]) -> SentRequest:
    """A Messages API body in core's terms."""
    system = body.get("system")
    choice = body.get("tool_choice") or {}
    choices = {"auto": "auto", "any": "required", "none": "none"}
    options = {k: body[k] for k in ("temperature", "top_p", "max_tokens") if k in body}
    if "stop_sequences" in body:
        options["stop"] = list(body["stop_sequences"])
    return SentRequest(
        model=body.get("model"),
        system=(_text(system),) if system else (),
        messages=tuple(m for turn in body.get("messages", []) for m in _turns(turn)),
        tools=tuple(
            SentTool(t["name"], t.get("description", ""), t.get("input_schema", {})) for t in body.get("tools", [])
        ),
        tool_choice=choice.get("name") if choice.get("type") == "tool" else choices.get(choice.get("type", "")),
        options=options,
        stream=body.get("stream") is True,
        output_schema=body.get("output_config", {}).get("format", {}).get("schema"),
        raw=body,
    )


class MessagesWire(WireAdapter):
    """``POST /v1/messages`` as Anthropic documents it."""

    def response(self, reply: Reply) -> dict[str, Any]:
        return wire.message(
            _content(reply),
            stop_reason=_stop(reply),
            message_usage=_usage(reply),
            model=reply.model,
            message_id=reply.response_id,
        )

    def stream(self, reply: Reply) -> list[bytes]:
        blocks: list[dict[str, Any]] = []
        if reply.reasoning:
            blocks.append({"thinking": ["Thinking ", "it over."], "signature": reply.reasoning})
        text = reply.refusal or reply.text
        if text:
            words = text.split(" ")
            blocks.append({"text": [words[0], *(" " + w for w in words[1:])]})
        for call in reply.tool_calls:
            half = len(call.arguments) // 2
            blocks.append({"tool_use": (call.id, call.name), "json": [call.arguments[:half], call.arguments[half:]]})
        start = {**_usage(reply), "output_tokens": 1}
        body = wire.stream_body(
            blocks,
            stop_reason=_stop(reply),
            start_usage=start,
            output_tokens=reply.usage.output_tokens,
            model=reply.model,
            message_id=reply.response_id,
        )
        return [event + b"\n\n" for event in body.split(b"\n\n") if event.strip()]

    def error_body(self, error: FakeError) -> dict[str, Any]:
        return wire.error_body(ERRORS[error.kind][1], error.message)

    def error_status(self, error: FakeError) -> int:
        return ERRORS[error.kind][0] or super().error_status(error)

    def read_request(self, received: Received) -> SentRequest:
        return read_messages_request(received.json())
