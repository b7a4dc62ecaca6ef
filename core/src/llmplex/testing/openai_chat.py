"""The OpenAI Chat Completions wire for the conformance kit: most third-party plugins speak it.

``OpenAIChatWire`` renders the kit's replies, streams and errors the way
``POST /chat/completions`` answers (OpenAI's API reference) and reads a sent
``CreateChatCompletionRequest`` back into core's terms. Use it as the ``wire``
of an ``HTTPConformanceTests`` subclass with ``base_path = "/v1"``::

    from llmplex.testing import HTTPConformanceTests, OpenAIChatWire

    class TestConformance(HTTPConformanceTests):
        prefix = "myprovider"
        model = "my-model"
        wire = OpenAIChatWire()
        base_path = "/v1"

Override ``check(schema, body)`` to validate each rendered body (against an
OpenAPI spec, say); override ``response``/``chunks`` for a server's own fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from llmplex.testing.http_wire import WireAdapter, sse
from llmplex.testing.replies import FakeError, Reply
from llmplex.testing.sent import SentMessage, SentRequest, SentTool, SentToolCall, json_arguments
from llmplex.testing.server import Received

__all__ = ["CHAT_ERRORS", "OpenAIChatWire", "read_chat_request"]

Json = dict[str, Any]

CHAT_ERRORS: Mapping[str, tuple[str, str | None]] = {
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
"""Error kind → the ``error.type`` and ``error.code`` OpenAI answers with."""

_FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "content_filter": "content_filter"}
_OPTIONS = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "presence_penalty", "frequency_penalty")
_CREATED = 1_741_569_952


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [words[0], *(" " + w for w in words[1:])] if text else []


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def _choice(choice: Any) -> str | None:
    if isinstance(choice, dict):
        return str(choice.get("function", {}).get("name") or choice.get("name"))
    return choice if choice is None else str(choice)


def _message(message: Mapping[str, Any]) -> SentMessage:
    if message.get("role") == "tool":
        return SentMessage("tool", _text(message.get("content")), tool_call_id=message.get("tool_call_id"))
    calls = tuple(
        SentToolCall(c.get("id"), c["function"]["name"], json_arguments(c["function"].get("arguments")))
        for c in message.get("tool_calls") or []
    )
    role: Literal["user", "assistant"] = "assistant" if message.get("role") == "assistant" else "user"
    return SentMessage(role, _text(message.get("content")), calls)


def read_chat_request(body: Mapping[str, Any]) -> SentRequest:
    """A ``CreateChatCompletionRequest`` body in core's terms (``max_completion_tokens`` read as ``max_tokens``)."""
    messages = body.get("messages", [])
    system = tuple(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    turns = tuple(_message(m) for m in messages if m.get("role") not in ("system", "developer"))
    tools = tuple(
        SentTool(t["function"]["name"], t["function"].get("description", ""), t["function"].get("parameters", {}))
        for t in body.get("tools", [])
    )
    options = {("max_tokens" if k == "max_completion_tokens" else k): body[k] for k in (*_OPTIONS, "seed") if k in body}
    if "stop" in body:
        options["stop"] = [body["stop"]] if isinstance(body["stop"], str) else list(body["stop"])
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
    return SentRequest(
        model=body.get("model"),
        system=system,
        messages=turns,
        tools=tools,
        tool_choice=_choice(body.get("tool_choice")),
        options=options,
        stream=body.get("stream") is True,
        output_schema=schema,
        raw=body,
    )


class OpenAIChatWire(WireAdapter):
    """``POST /chat/completions`` as OpenAI's API reference documents it, for any OpenAI-compatible plugin."""

    def check(self, schema: str, body: Json) -> None:
        """Called with each rendered body and its OpenAPI schema name (``CreateChatCompletionResponse``,
        ``CreateChatCompletionStreamResponse``, ``ErrorResponse``); a no-op unless overridden."""

    def usage(self, reply: Reply) -> Json:
        """The reply's ``CompletionUsage`` (cached and reasoning tokens in their details)."""
        u = reply.usage
        return {
            "prompt_tokens": u.input_tokens,
            "completion_tokens": u.output_tokens,
            "total_tokens": u.input_tokens + u.output_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": u.reasoning_tokens,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def response(self, reply: Reply) -> Json:
        """A ``chat.completion`` with one choice carrying the reply."""
        message: Json = {"role": "assistant", "content": reply.text or None, "refusal": reply.refusal}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in reply.tool_calls
            ]
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": _FINISH.get(reply.finish, "stop")}
        body = {**self._envelope(reply, "chat.completion"), "choices": [choice], "usage": self.usage(reply)}
        self.check("CreateChatCompletionResponse", body)
        return body

    def chunks(self, reply: Reply) -> list[Json]:
        """The ``chat.completion.chunk`` objects of ``reply``: text word by word, each call its own index,
        the finish reason, then a usage chunk (as ``stream_options.include_usage`` asks)."""
        deltas: list[Json] = [{"role": "assistant", "content": "", "refusal": None}]
        deltas += [{"content": word} for word in _words(reply.text)]
        deltas += [{"refusal": word} for word in _words(reply.refusal or "")]
        for index, call in enumerate(reply.tool_calls):
            head = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
            half = len(call.arguments) // 2
            deltas.append({"tool_calls": [head]})
            deltas += [
                {"tool_calls": [{"index": index, "function": {"arguments": part}}]}
                for part in (call.arguments[:half], call.arguments[half:])
            ]
        chunks = [self._chunk(reply, [self._delta(delta)]) for delta in deltas]
        chunks.append(self._chunk(reply, [self._delta({}, _FINISH.get(reply.finish, "stop"))]))
        chunks.append({**self._chunk(reply, []), "usage": self.usage(reply)})
        for chunk in chunks:
            self.check("CreateChatCompletionStreamResponse", chunk)
        return chunks

    def stream(self, reply: Reply) -> Sequence[bytes]:
        """The chunks as server-sent events, ending with ``data: [DONE]``."""
        return [*(sse(chunk) for chunk in self.chunks(reply)), sse("[DONE]")]

    def error_body(self, error: FakeError) -> Json:
        """``{"error": {"message", "type", "param", "code"}}`` for the kind."""
        kind, code = CHAT_ERRORS.get(error.kind, ("server_error", None))
        body = {"error": {"message": error.message, "type": kind, "param": None, "code": code}}
        self.check("ErrorResponse", body)
        return body

    def read_request(self, received: Received) -> SentRequest:
        """The sent ``CreateChatCompletionRequest`` in core's terms."""
        return read_chat_request(received.json())

    def _envelope(self, reply: Reply, kind: str) -> Json:
        return {"id": reply.response_id, "object": kind, "created": _CREATED, "model": reply.model}

    def _chunk(self, reply: Reply, choices: list[Json]) -> Json:
        return {**self._envelope(reply, "chat.completion.chunk"), "choices": choices, "usage": None}

    @staticmethod
    def _delta(delta: Json, finish: str | None = None) -> Json:
        return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
