"""The OpenAI Chat Completions wire for the conformance kit, shared by every plugin that speaks it.

:class:`ChatWire` renders the kit's replies and errors with the builders of
``tests.contract.fixtures_openai`` (each answer validated against OpenAI's
OpenAPI spec) and reads a sent ``CreateChatCompletionRequest`` back into core's
terms. :class:`OpenAIWireConformance` is the kit over it, for the openai,
llamacpp, litellm and reference plugins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from llmplex.testing import FakeError, HTTPConformanceTests, Received, Reply, WireAdapter, sse
from llmplex.testing.sent import SentMessage, SentRequest, SentTool, SentToolCall, json_arguments
from tests.contract import fixtures_openai as wire
from tests.contract.openapi import validate_openai

__all__ = [
    "ERRORS",
    "ChatWire",
    "OpenAIWireConformance",
    "calls_of",
    "error_body",
    "read_chat_request",
    "usage_of",
    "words_of",
]

ERRORS: Mapping[str, tuple[str, str | None]] = {
    "bad_request": ("invalid_request_error", None),
    "authentication": ("invalid_request_error", "invalid_api_key"),
    "forbidden": ("invalid_request_error", "unsupported_country_region_territory"),
    "not_found": ("invalid_request_error", "model_not_found"),
    "request_timeout": ("timeout", None),
    "conflict": ("invalid_request_error", "conflict"),
    "too_large": ("invalid_request_error", "request_too_large"),
    "unprocessable": ("invalid_request_error", None),
    "rate_limit": ("tokens", "rate_limit_exceeded"),
    "quota": ("insufficient_quota", "insufficient_quota"),
    "server": ("server_error", None),
    "unavailable": ("server_error", None),
    "overloaded": ("server_error", None),
}
"""Error kind → the error type and code OpenAI answers with."""

FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "content_filter": "content_filter"}
"""Core finish reason → Chat Completions' (a refusal ends with ``stop`` and sets ``refusal``)."""
OPTIONS = {"max_completion_tokens": "max_tokens"}
"""Chat Completions option names that are not core's."""


def usage_of(reply: Reply) -> wire.TokenUsage:
    """The reply's token counts for the builders."""
    u = reply.usage
    return wire.TokenUsage(u.input_tokens, u.output_tokens, u.cached_tokens, u.reasoning_tokens)


def calls_of(reply: Reply) -> list[wire.FunctionCall]:
    """The reply's tool calls for the builders."""
    return [wire.FunctionCall(name=c.name, arguments=c.arguments, call_id=c.id) for c in reply.tool_calls]


def words_of(text: str) -> list[str]:
    """Stream deltas: each word after the first keeps its leading space."""
    words = text.split(" ")
    return [words[0], *(" " + w for w in words[1:])] if text else []


def error_body(error: FakeError) -> wire.Json:
    """A validated ``ErrorResponse`` body for ``error``."""
    kind, code = ERRORS[error.kind]
    body = wire.error_body(error.message, kind, code=code)
    validate_openai("ErrorResponse", body)
    return body


def _text(content: Any) -> str:
    """Message content as text: a string, or the text of its parts."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def _choice(choice: Any) -> str | None:
    if isinstance(choice, dict):
        return str(choice.get("function", {}).get("name") or choice.get("name"))
    return choice if choice is None else str(choice)


def read_chat_request(body: Mapping[str, Any]) -> SentRequest:
    """A ``CreateChatCompletionRequest`` in core's terms."""
    system: list[str] = []
    messages: list[SentMessage] = []
    for message in body.get("messages", []):
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(_text(message.get("content")))
        elif role == "tool":
            messages.append(
                SentMessage("tool", _text(message.get("content")), tool_call_id=message.get("tool_call_id"))
            )
        else:
            calls = tuple(
                SentToolCall(c.get("id"), c["function"]["name"], json_arguments(c["function"].get("arguments")))
                for c in message.get("tool_calls") or []
            )
            messages.append(SentMessage(role, _text(message.get("content")), calls))
    tools = tuple(
        SentTool(t["function"]["name"], t["function"].get("description", ""), t["function"].get("parameters", {}))
        for t in body.get("tools", [])
    )
    option_names = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "presence_penalty")
    options = {OPTIONS.get(k, k): body[k] for k in (*option_names, "frequency_penalty", "seed") if k in body}
    if "stop" in body:
        options["stop"] = [body["stop"]] if isinstance(body["stop"], str) else list(body["stop"])
    schema = body.get("response_format", {}).get("json_schema", {}).get("schema")
    return SentRequest(
        model=body.get("model"),
        system=tuple(system),
        messages=tuple(messages),
        tools=tools,
        tool_choice=_choice(body.get("tool_choice")),
        options=options,
        stream=body.get("stream") is True,
        output_schema=schema,
        raw=body,
    )


class ChatWire(WireAdapter):
    """``POST /chat/completions`` as OpenAI documents it."""

    def response(self, reply: Reply) -> wire.Json:
        body = wire.chat_completion(
            reply.text or None,
            finish_reason=FINISH.get(reply.finish, "stop"),  # type: ignore[arg-type]
            tool_calls=calls_of(reply) or None,
            refusal=reply.refusal,
            usage=usage_of(reply),
            model=reply.model,
        )
        body["id"] = reply.response_id
        validate_openai("CreateChatCompletionResponse", body)
        return body

    def chunks(self, reply: Reply) -> list[wire.Json]:
        """The ``chat.completion.chunk`` objects of ``reply`` streamed: text word by word, each call its index."""
        chunks = [wire.chat_chunk({"role": "assistant", "content": "", "refusal": None}, model=reply.model)]
        chunks += [wire.chat_chunk({"content": word}, model=reply.model) for word in words_of(reply.text)]
        if reply.refusal:
            chunks += [wire.chat_chunk({"refusal": word}, model=reply.model) for word in words_of(reply.refusal)]
        for index, call in enumerate(reply.tool_calls):
            head = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
            half = len(call.arguments) // 2
            chunks.append(wire.chat_chunk({"tool_calls": [head]}, model=reply.model))
            for part in (call.arguments[:half], call.arguments[half:]):
                delta = {"tool_calls": [{"index": index, "function": {"arguments": part}}]}
                chunks.append(wire.chat_chunk(delta, model=reply.model))
        chunks.append(wire.chat_chunk({}, finish_reason=FINISH.get(reply.finish, "stop"), model=reply.model))
        chunks.append(wire.chat_usage_chunk(usage_of(reply), model=reply.model))
        for chunk in chunks:
            chunk["id"] = reply.response_id
            validate_openai("CreateChatCompletionStreamResponse", chunk)
        return chunks

    def stream(self, reply: Reply) -> list[bytes]:
        return [*(sse(chunk) for chunk in self.chunks(reply)), sse("[DONE]")]

    def error_body(self, error: FakeError) -> wire.Json:
        return error_body(error)

    def read_request(self, received: Received) -> SentRequest:
        return read_chat_request(received.json())


class OpenAIWireConformance(HTTPConformanceTests):
    """The kit against a local server speaking Chat Completions under ``base_path``."""

    wire: ClassVar[WireAdapter] = ChatWire()
    base_path: ClassVar[str] = "/v1"
