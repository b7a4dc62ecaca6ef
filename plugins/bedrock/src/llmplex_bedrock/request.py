"""Core ``Request`` → the keyword arguments of ``client.converse`` / ``client.converse_stream``.

Field names are the Converse API's (``modelId``, ``messages``, ``system``,
``inferenceConfig``, ``toolConfig``), as botocore's service model validates them.
"""

from __future__ import annotations

import re
from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.http import check_name
from llmplex.types import ContentPart, Message, Request, Tool
from llmplex_bedrock.settings import BedrockSettings

__all__ = ["IMAGE_FORMATS", "SAMPLING_OPTIONS", "format_request", "tool_spec"]

SAMPLING_OPTIONS = frozenset({"temperature", "top_p", "max_tokens", "stop"})
"""The core options Converse's ``inferenceConfig`` takes; the others are refused before sending."""

_OPTION_NAMES = {"temperature": "temperature", "top_p": "topP", "max_tokens": "maxTokens"}
IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}
_DOCUMENT_FORMATS = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9\s\-\(\)\[\]]")
"""What Converse refuses in a document's name (letters, digits, single spaces, hyphens, brackets only)."""


def format_request(request: Request, settings: BedrockSettings) -> dict[str, Any]:
    """The ``converse`` payload for ``request``."""
    system, messages = _conversation(request.messages)
    # botocore percent-encodes the model id into /model/{modelId}/converse, but a '..' id would still be a dot
    # segment: names no model has are refused first
    model = check_name(settings.model or request.model, "Bedrock model id")
    payload: dict[str, Any] = {"modelId": model, "messages": messages}
    if system:
        payload["system"] = [{"text": text} for text in system]
    inference = _inference_config(request)
    if inference:
        payload["inferenceConfig"] = inference
    if request.tools or _has_tool_turns(request.messages):
        payload["toolConfig"] = _tool_config(request.tools, request.tool_choice)
    elif request.tool_choice not in (None, "auto", "none"):
        raise LLMConfigurationError(f"tool_choice {request.tool_choice!r} needs tools, and the request has none")
    payload.update(request.provider_options)
    return payload


def _inference_config(request: Request) -> dict[str, Any]:
    options = request.config.set_options()
    refused = sorted(set(options) - SAMPLING_OPTIONS)
    if refused:
        raise LLMConfigurationError(
            f"Bedrock's Converse API does not take {', '.join(refused)}: leave them unset for bedrock: models "
            "(model-specific fields go in provider_options['additionalModelRequestFields'])"
        )
    config = {_OPTION_NAMES[name]: value for name, value in options.items() if name in _OPTION_NAMES}
    if "stop" in options:
        config["stopSequences"] = list(options["stop"])
    return config


# -- messages -------------------------------------------------------------------


def _has_tool_turns(messages: tuple[Message, ...]) -> bool:
    return any(m.role == "tool" or m.tool_calls for m in messages)


def _conversation(messages: tuple[Message, ...]) -> tuple[list[str], list[dict[str, Any]]]:
    """The system texts and the user/assistant turns; consecutive turns of one role are merged, as Converse needs."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.role == "system":
            if message.text:
                system.append(message.text)
        elif message.role == "user":
            _append(turns, "user", [_user_block(piece, index) for piece in message.pieces] or [{"text": ""}])
        elif message.role == "tool":
            _append(turns, "user", [_tool_result(message, index)])
        else:
            _append(turns, "assistant", _assistant_blocks(message, index))
    return system, turns


def _append(turns: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if turns and turns[-1]["role"] == role:
        turns[-1]["content"].extend(blocks)
    else:
        turns.append({"role": role, "content": blocks})


def _user_block(piece: ContentPart, index: int) -> dict[str, Any]:
    """Text, an image or a document as a Converse content block (bytes only: Converse reads no URLs but S3's)."""
    if isinstance(piece, str):
        return {"text": piece}
    if piece.data is None:
        raise LLMConfigurationError(
            f"messages[{index}] has a {piece.kind} given by URL: Bedrock's Converse API takes the bytes "
            "(load it with from_path, or pass data=...)"
        )
    if piece.kind == "image":
        image_format = IMAGE_FORMATS.get(piece.media_type)
        if image_format is None:
            raise LLMConfigurationError(
                f"messages[{index}] has an image of type {piece.media_type}: Bedrock takes "
                f"{', '.join(sorted(IMAGE_FORMATS))}"
            )
        return {"image": {"format": image_format, "source": {"bytes": piece.data}}}
    if piece.kind == "document":
        document_format = _DOCUMENT_FORMATS.get(piece.media_type)
        if document_format is None:
            raise LLMConfigurationError(
                f"messages[{index}] has a document of type {piece.media_type}: Bedrock takes "
                f"{', '.join(sorted(_DOCUMENT_FORMATS))}"
            )
        return {
            "document": {
                "format": document_format,
                "name": _document_name(getattr(piece, "name", None), index),
                "source": {"bytes": piece.data},
            }
        }
    raise LLMConfigurationError(f"messages[{index}] has an {piece.kind} part: Bedrock's Converse API takes none")


def _document_name(name: str | None, index: int) -> str:
    """The document's name as Converse accepts it (its documented character set), never empty."""
    cleaned = " ".join(_NAME_UNSAFE.sub(" ", name or "").split())
    return cleaned[:200] or f"document {index}"


def _assistant_blocks(message: Message, index: int) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"text": message.text}] if message.text else []
    blocks += [
        {"toolUse": {"toolUseId": call.id, "name": call.name, "input": call.arguments_object(index)}}
        for call in message.tool_calls
    ]
    if not blocks:
        raise LLMConfigurationError(f"messages[{index}] is an assistant message with neither content nor tool calls")
    return blocks


def _tool_result(message: Message, index: int) -> dict[str, Any]:
    if not message.tool_call_id:
        raise LLMConfigurationError(f"messages[{index}] is a tool result without tool_call_id: Bedrock needs it")
    return {"toolResult": {"toolUseId": message.tool_call_id, "content": [{"text": message.text}]}}


# -- tools -------------------------------------------------------------------------


def tool_spec(tool: Tool) -> dict[str, Any]:
    """One tool as a Converse ``Tool`` (``toolSpec`` with its JSON Schema)."""
    spec: dict[str, Any] = {"name": tool.name, "inputSchema": {"json": tool.parameters}}
    if tool.description:
        spec["description"] = tool.description
    return {"toolSpec": spec}


def _tool_config(tools: tuple[Tool, ...], choice: str | None) -> dict[str, Any]:
    if not tools:
        raise LLMConfigurationError(
            "the conversation has tool calls or results but the request declares no tools: Bedrock's Converse "
            "API needs the tools declared whenever they appear in the history"
        )
    config: dict[str, Any] = {"tools": [tool_spec(tool) for tool in tools]}
    if choice in (None, "auto"):
        return config if choice is None else {**config, "toolChoice": {"auto": {}}}
    if choice == "none":
        raise LLMConfigurationError(
            "Bedrock's Converse API has no tool_choice 'none': leave the tools out of this request instead"
        )
    if choice == "required":
        return {**config, "toolChoice": {"any": {}}}
    if choice not in {tool.name for tool in tools}:
        names = ", ".join(tool.name for tool in tools)
        raise LLMConfigurationError(f"tool_choice {choice!r} names no declared tool (declared: {names})")
    return {**config, "toolChoice": {"tool": {"name": choice}}}
