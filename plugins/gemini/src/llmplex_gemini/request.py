"""Core ``Request`` → keyword arguments of ``client.models.generate_content``.

The payload is ``{"model", "contents", "config"}`` in the SDK's own field names;
``contents`` items validate as ``types.Content`` and ``config`` as
``types.GenerateContentConfig``.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.http import path_segment
from llmplex.types import ContentPart, Message, OutputSchema, Request, Tool
from llmplex_gemini.response import GENERATED_CALL_ID
from llmplex_gemini.settings import GeminiSettings
from llmplex_gemini.thoughts import replayed_parts, thinking_config

__all__ = ["SKIP_SIGNATURE", "format_request", "tool_declaration"]

SKIP_SIGNATURE = "skip_thought_signature_validator"
"""Google's documented stand-in for a thought signature the conversation no longer has.

Gemini 3 models reject a replayed function call without ``thought_signature``;
core's ``ToolCall`` does not carry the original one, so replayed calls get this."""

_OPTION_NAMES = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_output_tokens",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "seed": "seed",
}
_MIME_TYPES = {"audio/mpeg": "audio/mp3"}
"""Where Gemini's documented name of a media type differs from the IANA one llmplex uses."""
_URL_PREFIXES = ("models/", "tunedModels/", "publishers/google/models/")
"""The resource prefixes google-genai keeps in front of a model name; the rest of the name is one path segment."""
_MODEL_GENERATION = re.compile(r"^(?:models/)?gemini-(\d+)")
_FIRST_SIGNED_GENERATION = 3


@functools.lru_cache(maxsize=256)
def url_model(model: str) -> str:
    """``model`` as google-genai puts it into the URL: the name percent-encoded as one path segment (after a
    ``models/``, ``tunedModels/`` or ``publishers/google/models/`` prefix), so ``#``, ``?``, ``/`` or ``@`` never
    steer the request; a name holding ``..``, whitespace or a control character is refused
    (``LLMConfigurationError``, every time: only names that pass are kept)."""
    prefix = next((p for p in _URL_PREFIXES if model.startswith(p)), "")
    return prefix + path_segment(model[len(prefix) :], "Gemini model name")


def format_request(request: Request, settings: GeminiSettings) -> dict[str, Any]:
    """The ``generate_content`` payload for ``request``."""
    model = settings.model or request.model
    system, contents = _conversation(request.messages, _needs_signature(model))
    config: dict[str, Any] = _options(request, model)
    if system:
        config["system_instruction"] = system
    config.update(_tools(request.tools, request.tool_choice))
    if request.output is not None:
        config.update(_output(request.output))
    config["automatic_function_calling"] = {"disable": True}
    config.update(request.provider_options)
    return {"model": model, "contents": contents, "config": config}


def _needs_signature(model: str) -> bool:
    generation = _MODEL_GENERATION.match(model)
    return generation is not None and int(generation.group(1)) >= _FIRST_SIGNED_GENERATION


def _options(request: Request, model: str) -> dict[str, Any]:
    options = request.config.set_options()
    if not options:
        return {}
    config = {_OPTION_NAMES[name]: value for name, value in options.items() if name in _OPTION_NAMES}
    if "stop" in options:
        config["stop_sequences"] = list(options["stop"])
    if "reasoning_effort" in options:
        config["thinking_config"] = thinking_config(model, options["reasoning_effort"])
    return config


# -- messages -------------------------------------------------------------------


def _conversation(messages: tuple[Message, ...], sign_calls: bool) -> tuple[str, list[dict[str, Any]]]:
    """The joined system instruction and the user/model contents; same-role turns are merged."""
    system_parts: list[str] = []
    contents: list[dict[str, Any]] = []
    call_names: dict[str, str] = {}
    for index, message in enumerate(messages):
        if message.role == "system":
            system_parts.append(message.text)
        elif message.role == "user":
            _append(contents, "user", [_user_part(piece) for piece in message.pieces] or [{"text": ""}])
        elif message.role == "tool":
            _append(contents, "user", [_function_response(message, index, call_names)])
        else:
            for call in message.tool_calls:
                call_names[call.id] = call.name
            _append(contents, "model", _model_parts(message, index, sign_calls))
    return "\n\n".join(p for p in system_parts if p), contents


def _user_part(piece: ContentPart) -> dict[str, Any]:
    """Text, bytes as ``inline_data`` (the SDK base64-encodes them), or a URL as ``file_data``."""
    if isinstance(piece, str):
        return {"text": piece}
    mime_type = _MIME_TYPES.get(piece.media_type, piece.media_type)
    if piece.data is None:
        return {"file_data": {"file_uri": piece.url, "mime_type": mime_type}}
    return {"inline_data": {"mime_type": mime_type, "data": piece.data}}


def _append(contents: list[dict[str, Any]], role: str, parts: list[dict[str, Any]]) -> None:
    if contents and contents[-1]["role"] == role:
        contents[-1]["parts"].extend(parts)
    else:
        contents.append({"role": role, "parts": parts})


def _model_parts(message: Message, index: int, sign_calls: bool) -> list[dict[str, Any]]:
    replayed = replayed_parts(message)
    if replayed is not None:
        return replayed  # the turn as Gemini sent it, thoughts and signatures included
    parts: list[dict[str, Any]] = [{"text": message.text}] if message.text else []
    for position, call in enumerate(message.tool_calls):
        function_call = {"name": call.name, "args": call.arguments_object(index), **_call_id(call.id)}
        part: dict[str, Any] = {"function_call": function_call}
        if sign_calls and position == 0:
            part["thought_signature"] = SKIP_SIGNATURE
        parts.append(part)
    if not parts:
        raise LLMConfigurationError(f"messages[{index}] is an assistant message with neither content nor tool calls")
    return parts


def _function_response(message: Message, index: int, call_names: dict[str, str]) -> dict[str, Any]:
    """A result names its function (from the call, else ``Message.name``) and carries the call's id."""
    name = call_names.get(message.tool_call_id or "") or message.name
    if not name:
        raise LLMConfigurationError(
            f"messages[{index}] is a tool result whose function name is unknown: Gemini needs it, so give "
            "tool_call_id of an earlier assistant tool call, or name"
        )
    response = {"name": name, "response": _result(message.text), **_call_id(message.tool_call_id)}
    return {"function_response": response}


def _call_id(given: str | None) -> dict[str, str]:
    """The call's ``id`` field: Gemini matches a result to its call by it (two calls of one function
    in a turn are told apart only so); left out for ids llmplex made up (``gemini-call-N``)."""
    return {"id": given} if given and not given.startswith(GENERATED_CALL_ID) else {}


def _result(content: str) -> dict[str, Any]:
    """A JSON object result as it is; anything else under ``output`` (Google's documented key)."""
    try:
        value = json.loads(content)
    except ValueError:
        return {"output": content}
    return value if isinstance(value, dict) else {"output": value}


# -- tools and structured output ------------------------------------------------------


def tool_declaration(tool: Tool) -> dict[str, Any]:
    """One tool as a ``FunctionDeclaration`` (the SDK's field names)."""
    return {"name": tool.name, "description": tool.description, "parameters_json_schema": tool.parameters}


def _tools(tools: tuple[Tool, ...], choice: str | None) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if tools:
        declarations = [tool_declaration(t) for t in tools]
        config["tools"] = [{"function_declarations": declarations}]
    if choice is not None:
        config["tool_config"] = {"function_calling_config": _calling_config(choice, tools)}
    return config


def _calling_config(choice: str, tools: tuple[Tool, ...]) -> dict[str, Any]:
    modes = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
    if choice in modes:
        return {"mode": modes[choice]}
    if choice not in {t.name for t in tools}:
        names = ", ".join(t.name for t in tools) or "none"
        raise LLMConfigurationError(f"tool_choice {choice!r} names no declared tool (declared: {names})")
    return {"mode": "ANY", "allowed_function_names": [choice]}


def _output(output: OutputSchema) -> dict[str, Any]:
    """JSON mode with the schema as JSON Schema.

    ``response_json_schema`` takes standard JSON Schema as it is; ``response_schema``
    is the SDK's OpenAPI-subset ``Schema`` and breaks on common JSON Schema such as
    ``"type": ["integer", "null"]``.
    """
    return {"response_mime_type": "application/json", "response_json_schema": output.json_schema}
