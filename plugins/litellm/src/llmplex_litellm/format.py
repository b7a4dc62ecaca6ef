"""Core Request → keyword arguments of ``litellm.completion`` (OpenAI chat shape)."""

from __future__ import annotations

from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.http import chat_content_part
from llmplex.types import Message, Request, Tool
from llmplex_litellm.settings import RESERVED_KWARGS

__all__ = ["format_request", "tool_declaration"]


def _message(message: Message, index: int) -> dict[str, Any]:
    content = message.content
    parts = (
        [chat_content_part(piece, index, provider="litellm") for piece in content]
        if isinstance(content, tuple)
        else None
    )
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
