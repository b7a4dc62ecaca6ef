"""Core ``Request`` → keyword arguments of ``client.messages.create``."""

from __future__ import annotations

import re
from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.types import Audio, ContentPart, Message, OutputSchema, Request, Tool
from llmplex_anthropic.caching import mark, mark_last_markable, place_breakpoints
from llmplex_anthropic.settings import AnthropicSettings
from llmplex_anthropic.thinking import reasoning_blocks, thinking_options

__all__ = ["SUPPORTED_OPTIONS", "format_request", "tool_declaration", "uses_native_output"]

_NO_NATIVE_OUTPUT = re.compile(r"^claude-(instant|2|3)|^claude-(sonnet|opus)-4(-[01])?(-\d{8})?$")
"""Models released before ``output_config.format``: structured output goes through a forced tool."""

SUPPORTED_OPTIONS = ("max_tokens", "stop", "reasoning_effort")
"""The Messages API of SDK 2.x (API version 2026-10-21) has no sampling parameters:
temperature, top_p and top_k are rejected with a 400, so they fail here, before sending."""


def uses_native_output(model: str, settings: AnthropicSettings) -> bool:
    """Whether structured output goes in ``output_config.format`` (else: a forced tool)."""
    if settings.structured_output != "auto":
        return settings.structured_output == "native"
    return _NO_NATIVE_OUTPUT.search(model) is None


def format_request(request: Request, settings: AnthropicSettings) -> dict[str, Any]:
    """The Messages API payload: system on top, alternating turns, ``max_tokens`` always set, cache
    breakpoints where the request marks them (or on the stable prefix with ``prompt_cache="auto"``)."""
    prompt = _one_prompt(request)
    if prompt is not None:  # what the rest builds for it, built at once
        return {"model": request.model, "messages": [prompt], "max_tokens": settings.default_max_tokens}
    system, turns = _conversation(request.messages)
    options, effort = _options(request, settings)
    payload: dict[str, Any] = {"model": request.model, "messages": turns, **options}
    payload.setdefault("max_tokens", settings.default_max_tokens)
    if system:
        payload["system"] = _system_blocks(request.messages) or system
    payload.update(_tools(request, settings))
    if effort:
        payload["output_config"] = {**effort, **payload.get("output_config", {})}
    if "thinking" in payload and payload.get("tool_choice", {}).get("type") in ("any", "tool"):
        raise LLMConfigurationError(
            "Anthropic's extended thinking (reasoning_effort) cannot be combined with a forced tool call "
            "(tool_choice 'required' or a tool's name, or structured output through a tool): leave out "
            "reasoning_effort or let the model choose (tool_choice 'auto')"
        )
    place_breakpoints(payload, request.prompt_cache == "auto")
    payload.update(request.provider_options)
    return payload


def _one_prompt(request: Request) -> dict[str, Any] | None:
    """The one user turn of a request that is a single text prompt and nothing else (no options, tools, output,
    cache marks or provider options): most calls; ``None`` for any other request."""
    if len(request.messages) != 1 or request.tools or request.output is not None or request.provider_options:
        return None
    message = request.messages[0]
    text = message.content
    if (
        message.role != "user"
        or type(text) is not str
        or message.cache
        or request.tool_choice is not None
        or request.prompt_cache is not None
        or request.config.set_options()
    ):
        return None
    return {"role": "user", "content": text}


def _options(request: Request, settings: AnthropicSettings) -> tuple[dict[str, Any], dict[str, Any]]:
    """The option fields of the payload, and the ``output_config`` fields they need (the thinking effort)."""
    options = request.config.set_options()
    unsupported = sorted(name for name in options if name not in SUPPORTED_OPTIONS)
    if unsupported:
        raise LLMConfigurationError(
            f"the Anthropic Messages API does not accept {', '.join(unsupported)}: remove it from the request "
            "(supported: max_tokens, stop, reasoning_effort)"
        )
    wire: dict[str, Any] = {}
    if "max_tokens" in options:
        wire["max_tokens"] = options["max_tokens"]
    if "stop" in options:
        wire["stop_sequences"] = list(options["stop"])
    effort = options.get("reasoning_effort")
    if effort is None:
        return wire, {}
    thinking = thinking_options(request.model, effort, options.get("max_tokens"), settings.default_max_tokens)
    output_config = thinking.pop("output_config", {})
    return {**wire, **thinking}, output_config


# -- messages -------------------------------------------------------------------


def _conversation(messages: tuple[Message, ...]) -> tuple[str, list[dict[str, Any]]]:
    """The joined system prompt and the user/assistant turns (tool results folded into user turns)."""
    system_parts: list[str] = []
    turns: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.role == "system":
            system_parts.append(message.text)
        elif message.role == "user":
            _append_user(
                turns, _marked(message, [_user_block(piece, index) for piece in message.pieces] or [_text("")])
            )
        elif message.role == "tool":
            _append_user(turns, _marked(message, [_tool_result(message, index)]))
        else:
            turns.append({"role": "assistant", "content": _marked(message, _assistant_content(message, index))})
    return "\n\n".join(p for p in system_parts if p), [_compact(t) for t in turns]


def _system_blocks(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """With a cache mark on any system message: one text block per system message, the marked ones marked
    (each breakpoint where it was placed); without one, nothing (the joined text is sent)."""
    system = [m for m in messages if m.role == "system"]
    if not any(m.cache for m in system):
        return []
    return [mark(_text(m.text)) if m.cache else _text(m.text) for m in system if m.text]


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _marked(message: Message, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``blocks`` with a cache breakpoint on the last one when the message asks for it (``cache=True``)."""
    if message.cache:
        mark_last_markable(blocks)
    return blocks


def _user_block(piece: ContentPart, index: int) -> dict[str, Any]:
    """Text, or an ``image`` / ``document`` block with a base64 or URL source."""
    if isinstance(piece, str):
        return _text(piece)
    if isinstance(piece, Audio):
        raise LLMConfigurationError(
            f"the Anthropic Messages API takes no audio (messages[{index}]: {piece.describe()}); "
            'send audio to a provider that takes it (openai with api = "chat", gemini)'
        )
    if piece.url is not None:
        source: dict[str, Any] = {"type": "url", "url": piece.url}
    else:
        source = {"type": "base64", "media_type": piece.media_type, "data": piece.base64()}
    block = {"type": piece.type, "source": source}
    return mark(block) if piece.cache else block


def _append_user(turns: list[dict[str, Any]], blocks: list[dict[str, Any]]) -> None:
    """Consecutive user-side messages (tool results, then text) share one user turn."""
    if turns and turns[-1]["role"] == "user":
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": "user", "content": blocks})


def _compact(turn: dict[str, Any]) -> dict[str, Any]:
    """A turn holding one text block is sent as a plain string."""
    content = turn["content"]
    if len(content) == 1 and content[0]["type"] == "text" and "cache_control" not in content[0]:
        return {"role": turn["role"], "content": content[0]["text"]}
    return turn


def _tool_result(message: Message, index: int) -> dict[str, Any]:
    if not message.tool_call_id:
        raise LLMConfigurationError(
            f"messages[{index}] is a tool result without tool_call_id: set it to the id of the call it answers"
        )
    return {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.text}


def _assistant_content(message: Message, index: int) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.text:
        blocks.append(_text(message.text))
    for call in message.tool_calls:
        arguments = call.arguments_object(index)
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
    if not blocks:
        raise LLMConfigurationError(f"messages[{index}] is an assistant message with neither content nor tool calls")
    return reasoning_blocks(message) + blocks


# -- tools and structured output ------------------------------------------------------


def tool_declaration(tool: Tool) -> dict[str, Any]:
    """One tool as this API's request declares it."""
    declared: dict[str, Any] = {"name": tool.name, "input_schema": {"type": "object", **tool.parameters}}
    if tool.description:
        declared["description"] = tool.description
    return mark(declared) if tool.cache else declared


def _tool_choice(choice: str, tools: tuple[Tool, ...]) -> dict[str, Any]:
    if choice == "auto":
        return {"type": "auto"}
    if choice == "none":
        return {"type": "none"}
    if choice == "required":
        return {"type": "any"}
    if choice not in {t.name for t in tools}:
        names = ", ".join(t.name for t in tools) or "none"
        raise LLMConfigurationError(f"tool_choice {choice!r} names no declared tool (declared: {names})")
    return {"type": "tool", "name": choice}


def _output_tool(output: OutputSchema, tools: tuple[Tool, ...]) -> dict[str, Any]:
    if output.name in {t.name for t in tools}:
        raise LLMConfigurationError(f"the output schema name {output.name!r} is also a tool name: rename one of them")
    return {
        "name": output.name,
        "description": "Give the final answer by calling this tool with the answer as its input.",
        "input_schema": {"type": "object", **output.json_schema},
    }


def _tools(request: Request, settings: AnthropicSettings) -> dict[str, Any]:
    wire: dict[str, Any] = {}
    tools = [tool_declaration(t) for t in request.tools]
    if request.tool_choice is not None:
        wire["tool_choice"] = _tool_choice(request.tool_choice, request.tools)
    output = request.output
    if output is not None and uses_native_output(request.model, settings):
        wire["output_config"] = {"format": {"type": "json_schema", "schema": output.json_schema}}
    elif output is not None:
        tools.append(_output_tool(output, request.tools))
        if request.tool_choice is None:
            forced = {"type": "any"} if request.tools else {"type": "tool", "name": output.name}
            wire["tool_choice"] = forced
    if tools:
        wire["tools"] = tools
    return wire
