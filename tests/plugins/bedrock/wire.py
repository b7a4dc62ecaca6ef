"""The Bedrock runtime's Converse wire for the conformance kit and the plugin's own tests.

Shapes follow the Amazon Bedrock API reference (runtime): ``POST /model/{modelId}/converse``
answers a ``ConverseResponse`` JSON body; ``POST /model/{modelId}/converse-stream``
answers ``application/vnd.amazon.eventstream``: binary frames (prelude with lengths and
CRC32, string headers ``:event-type``/``:message-type``/``:content-type``, a JSON
payload, a message CRC32) carrying ``messageStart``, ``contentBlockStart``,
``contentBlockDelta``, ``contentBlockStop``, ``messageStop`` and ``metadata``, or an
exception frame (``:message-type: exception``). Errors are JSON ``{"message": ...}``
with the error's name in ``x-amzn-ErrorType``. Requests are read back with
botocore's own service model shapes in mind (``modelId`` is in the path).
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar
from urllib.parse import unquote

from llmplex.testing import FakeError, Received, Reply, WireAdapter
from llmplex.testing.sent import SentMessage, SentRequest, SentTool, SentToolCall
from llmplex.types import Usage

__all__ = [
    "ERRORS",
    "ConverseWire",
    "converse_body",
    "event_frame",
    "exception_frame",
    "frame",
    "stream_frames",
    "usage_body",
]

ERRORS: Mapping[str, str] = {
    "bad_request": "ValidationException",
    "authentication": "UnrecognizedClientException",
    "forbidden": "AccessDeniedException",
    "not_found": "ResourceNotFoundException",
    "request_timeout": "ModelTimeoutException",
    "conflict": "ConflictException",
    "too_large": "ValidationException",
    "unprocessable": "ValidationException",
    "rate_limit": "ThrottlingException",
    "quota": "ServiceQuotaExceededException",
    "server": "InternalServerException",
    "unavailable": "ServiceUnavailableException",
    "overloaded": "ServiceUnavailableException",
}
"""Kit error kind → Bedrock's documented error name. The kit's statuses are served as they are; Bedrock itself
answers a rejected key with 403 and a quota with 400, which tests/plugins/bedrock/test_bedrock_calls.py covers."""

STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens", "content_filter": "content_filtered"}
"""Core finish reason → ``stopReason``."""


def usage_body(usage: Usage) -> dict[str, Any]:
    """``TokenUsage``: ``inputTokens`` leaves the cache reads and writes out (they have their own fields)."""
    fresh = usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens
    body: dict[str, Any] = {
        "inputTokens": fresh,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.input_tokens + usage.output_tokens,
    }
    if usage.cached_tokens:
        body["cacheReadInputTokens"] = usage.cached_tokens
    if usage.cache_write_tokens:
        body["cacheWriteInputTokens"] = usage.cache_write_tokens
    return body


def _stop_reason(reply: Reply) -> str:
    return "guardrail_intervened" if reply.refusal else STOP.get(reply.finish, "end_turn")


def converse_body(reply: Reply) -> dict[str, Any]:
    """A ``ConverseResponse`` body carrying ``reply``."""
    content: list[dict[str, Any]] = []
    if reply.text or reply.refusal:
        content.append({"text": reply.refusal or reply.text})
    content += [
        {"toolUse": {"toolUseId": c.id, "name": c.name, "input": json.loads(c.arguments)}} for c in reply.tool_calls
    ]
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": _stop_reason(reply),
        "usage": usage_body(reply.usage),
        "metrics": {"latencyMs": 123},
    }


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack("!B", len(raw_name)) + raw_name + struct.pack("!BH", 7, len(raw_value)) + raw_value


def frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message: prelude (total and header lengths, their CRC32), headers, payload, CRC32."""
    head = b"".join(_header(name, value) for name, value in headers.items())
    total = 12 + len(head) + len(payload) + 4
    prelude = struct.pack("!II", total, len(head))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    message = prelude + head + payload
    return message + struct.pack("!I", zlib.crc32(message))


def event_frame(event_type: str, body: Mapping[str, Any]) -> bytes:
    """An event frame; the service pads payloads with a ``p`` field, which clients ignore."""
    payload = json.dumps({**body, "p": "abcdefgh"}).encode()
    headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
    return frame(headers, payload)


def exception_frame(exception_type: str, message: str) -> bytes:
    """An exception frame in the middle of a stream (``throttlingException``, ``modelStreamErrorException``...)."""
    headers = {":exception-type": exception_type, ":content-type": "application/json", ":message-type": "exception"}
    return frame(headers, json.dumps({"message": message}).encode())


def stream_frames(reply: Reply) -> list[bytes]:
    """ConverseStream frames for ``reply``: text word by word in block 0, each tool call in its own block."""
    frames = [event_frame("messageStart", {"role": "assistant"})]
    index = 0
    text = reply.refusal or reply.text
    if text:
        words = text.split(" ")
        for position, word in enumerate(words):
            piece = word if position == 0 else " " + word
            frames.append(event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}}))
        frames.append(event_frame("contentBlockStop", {"contentBlockIndex": 0}))
        index = 1
    for call in reply.tool_calls:
        start = {"toolUse": {"toolUseId": call.id, "name": call.name}}
        frames.append(event_frame("contentBlockStart", {"contentBlockIndex": index, "start": start}))
        arguments = call.arguments
        for cut in (arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :]):
            delta = {"toolUse": {"input": cut}}
            frames.append(event_frame("contentBlockDelta", {"contentBlockIndex": index, "delta": delta}))
        frames.append(event_frame("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    frames.append(event_frame("messageStop", {"stopReason": _stop_reason(reply)}))
    metadata = {"usage": usage_body(reply.usage), "metrics": {"latencyMs": 99}}
    frames.append(event_frame("metadata", metadata))
    return frames


def _text_of(content: Sequence[Mapping[str, Any]]) -> str:
    return "".join(block.get("text", "") for block in content if "text" in block)


def _turns(message: Mapping[str, Any]) -> list[SentMessage]:
    content = message.get("content", [])
    if message.get("role") == "assistant":
        calls = tuple(
            SentToolCall(b["toolUse"]["toolUseId"], b["toolUse"]["name"], b["toolUse"].get("input"))
            for b in content
            if "toolUse" in b
        )
        return [SentMessage("assistant", _text_of(content), calls)]
    results = [
        SentMessage("tool", _text_of(b["toolResult"].get("content", [])), tool_call_id=b["toolResult"]["toolUseId"])
        for b in content
        if "toolResult" in b
    ]
    return results + ([SentMessage("user", _text_of(content))] if any("text" in b for b in content) else [])


def _tool_choice(config: Mapping[str, Any]) -> str | None:
    choice = config.get("toolChoice")
    if not choice:
        return None
    if "tool" in choice:
        return str(choice["tool"]["name"])
    return "required" if "any" in choice else "auto"


def read_converse_request(received: Received) -> SentRequest:
    """A ``converse`` / ``converse-stream`` request in core's terms."""
    body = received.json() or {}
    _, _, rest = received.path.partition("/model/")
    model, _, method = rest.rpartition("/")
    inference = body.get("inferenceConfig", {})
    names = {"temperature": "temperature", "topP": "top_p", "maxTokens": "max_tokens"}
    options: dict[str, Any] = {core: inference[name] for name, core in names.items() if name in inference}
    if "stopSequences" in inference:
        options["stop"] = list(inference["stopSequences"])
    tool_config = body.get("toolConfig", {})
    return SentRequest(
        model=unquote(model),
        system=tuple(block["text"] for block in body.get("system", []) if "text" in block),
        messages=tuple(turn for message in body.get("messages", []) for turn in _turns(message)),
        tools=tuple(
            SentTool(t["toolSpec"]["name"], t["toolSpec"].get("description", ""), t["toolSpec"]["inputSchema"]["json"])
            for t in tool_config.get("tools", [])
        ),
        tool_choice=_tool_choice(tool_config),
        options=options,
        stream=method == "converse-stream",
        raw=body,
    )


class ConverseWire(WireAdapter):
    """Converse and ConverseStream as the Bedrock runtime API reference documents them."""

    stream_content_type: ClassVar[str] = "application/vnd.amazon.eventstream"

    def response(self, reply: Reply) -> dict[str, Any]:
        return converse_body(reply)

    def stream(self, reply: Reply) -> list[bytes]:
        return stream_frames(reply)

    def error_body(self, error: FakeError) -> dict[str, Any]:
        return {"message": error.message}

    def read_request(self, received: Received) -> SentRequest:
        return read_converse_request(received)
