"""Core Request → keyword arguments of ``litellm.completion`` (OpenAI chat shape)."""

from __future__ import annotations

from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.types import Audio, ContentPart, Document, Message, Request, Tool
from llmplex_litellm.settings import RESERVED_KWARGS

__all__ = ["format_request", "tool_declaration"]


def _part(piece: ContentPart, index: int) -> dict[str, Any]:
    """One piece of a user message as an OpenAI Chat Completions content part (LiteLLM translates it)."""
    if isinstance(piece, str):
        return {"type": "text", "text": piece}
    if isinstance(piece, Audio):
        return {"type": "input_audio", "input_audio": {"data": piece.base64(), "format": piece.format}}
    if isinstance(piece, Document):
        if piece.url is not None:
            raise LLMConfigurationError(
                f"litellm takes a document only as bytes, not by URL (messages[{index}]: {piece.describe()}); "
                "use llmplex.Document.from_path / from_bytes"
            )
        return {"type": "file", "file": {"filename": piece.filename, "file_data": piece.data_url()}}
    return {"type": "image_url", "image_url": {"url": piece.uri()}}


def _message(message: Message, index: int) -> dict[str, Any]:
    content = message.content
    parts = [_part(piece, index) for piece in content] if isinstance(content, tuple) else None
    out: dict[str, Any] = {"role": message.role, "content": content if parts is None else parts}
    if message.role == "assistant" and message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    elif message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
        if message.name:
            out["name"] = message.name
    elif message.content is None:
        out["content"] = ""
    return out


def tool_declaration(tool: Tool) -> dict[str, Any]:
    """One tool in the OpenAI Chat Completions shape LiteLLM takes for every provider."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def _tool_choice(choice: str) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def format_request(request: Request) -> dict[str, Any]:
    """The request as LiteLLM's OpenAI-style arguments; ``provider_options`` pass through."""
    reserved = sorted(RESERVED_KWARGS & set(request.provider_options))
    if reserved:
        raise LLMConfigurationError(
            f"provider_options {', '.join(reserved)} are not allowed for litellm: llmplex runs retries and "
            "fallbacks itself (throttle= and fallbacks in config) and sets the timeout from the deadline"
        )
    payload: dict[str, Any] = {
        "model": request.model,
        "messages": [_message(m, i) for i, m in enumerate(request.messages)],
    }
    options = request.config.set_options()
    if "stop" in options:
        options["stop"] = list(options["stop"])
    payload.update(options)
    if request.tools:
        payload["tools"] = [tool_declaration(t) for t in request.tools]
    if request.tool_choice is not None:
        payload["tool_choice"] = _tool_choice(request.tool_choice)
    if request.output is not None:
        payload["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": request.output.name,
                "schema": request.output.json_schema,
                "strict": request.output.strict,
            },
        }
    if request.stream:
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
    payload.update(request.provider_options)
    return payload
