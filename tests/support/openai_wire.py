"""Render successful OpenAI replies for the fault server: a JSON body or SSE frames."""

from __future__ import annotations

import json

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
        return encode(fx.chat_completion(text, usage=usage, model=model))
    return encode({**fx.response_text(text, usage), "model": model})


def success_events(path: str, request: fx.Json, text: str, usage: fx.TokenUsage) -> list[bytes]:
    """The SSE frames of a streamed reply, each ``data: ...`` block ending in a blank line.

    Chat Completions ends with ``data: [DONE]`` and sends the usage chunk only when
    ``stream_options.include_usage`` is set; the Responses API names each event.
    """
    parts = _words(text)
    if path == CHAT_PATH:
        options = request.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        chunks = fx.chat_stream_text(parts, usage=usage if include_usage else None)
        model = _model(request)
        return [_frame({**chunk, "model": model}) for chunk in chunks] + [b"data: [DONE]\n\n"]
    return [_frame(event, event["type"]) for event in fx.responses_stream_text(parts, usage=usage)]


def _frame(payload: fx.Json, event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + encode(payload) + b"\n\n"


def _model(request: fx.Json) -> str:
    model = request.get("model")
    return model if isinstance(model, str) else fx.MODEL


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [words[0], *(" " + word for word in words[1:])] if text else [""]
