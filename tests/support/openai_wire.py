"""Render successful OpenAI replies for the fault server: a JSON body or SSE frames.

Chat Completions answers come from the conformance kit's ``llmplex.testing.OpenAIChatWire``.
"""

from __future__ import annotations

import json

from llmplex.testing import OpenAIChatWire, Reply
from llmplex.types import Usage
from tests.contract import fixtures_openai as fx

CHAT_PATH = "/v1/chat/completions"
RESPONSES_PATH = "/v1/responses"
ENDPOINTS = (CHAT_PATH, RESPONSES_PATH)


def encode(payload: object) -> bytes:
    """Compact JSON, as the API sends it."""
    return json.dumps(payload, separators=(",", ":")).encode()


def success_body(path: str, request: fx.Json, text: str, usage: fx.TokenUsage) -> bytes:
    """The non-streaming JSON reply of ``path`` for ``request``."""
    model = _model(request)
    if path == CHAT_PATH:
        return encode(_CHAT.response(_reply(text, usage, model)))
    return encode({**fx.response_text(text, usage), "model": model})


def success_events(path: str, request: fx.Json, text: str, usage: fx.TokenUsage) -> list[bytes]:
    """The SSE frames of a streamed reply, each ``data: ...`` block ending in a blank line.

    Chat Completions ends with ``data: [DONE]`` and sends the usage chunk only when
    ``stream_options.include_usage`` is set; the Responses API names each event.
    """
    if path == CHAT_PATH:
        options = request.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        chunks = _CHAT.chunks(_reply(text, usage, _model(request)))
        return [_frame(chunk) for chunk in chunks[: None if include_usage else -1]] + [b"data: [DONE]\n\n"]
    return [_frame(event, event["type"]) for event in fx.responses_stream_text(_words(text), usage=usage)]


_CHAT = OpenAIChatWire()


def _reply(text: str, usage: fx.TokenUsage, model: str) -> Reply:
    counts = Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cached_tokens,
        reasoning_tokens=usage.reasoning_tokens,
    )
    return Reply(text=text, usage=counts, model=model, response_id=fx.CHAT_ID)


def _frame(payload: fx.Json, event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + encode(payload) + b"\n\n"


def _model(request: fx.Json) -> str:
    model = request.get("model")
    return model if isinstance(model, str) else fx.MODEL


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [words[0], *(" " + word for word in words[1:])] if text else [""]
