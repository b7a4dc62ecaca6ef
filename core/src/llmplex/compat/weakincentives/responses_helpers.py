"""weakincentives' Responses API translation helpers, as its OpenAI adapter module had them.

llmplex's openai provider does this translation itself; these keep weakincentives'
behaviour for code and tests that call the helpers by name
(``llmplex.compat.weakincentives.openai._responses_tool_spec`` and the rest).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llmplex.compat.weakincentives.errors import (
    PROMPT_EVALUATION_PHASE_REQUEST,
    PROMPT_EVALUATION_PHASE_RESPONSE,
    PromptEvaluationError,
)

__all__ = [
    "ProviderChoiceData",
    "ProviderFunctionCallData",
    "ProviderMessageData",
    "ProviderToolCallData",
    "choice_from_response",
    "extract_all_tool_calls",
    "normalize_input_messages",
    "normalize_tool_arguments",
    "responses_tool_choice",
    "responses_tool_spec",
    "tool_call_from_output",
]


@dataclass(frozen=True, slots=True)
class ProviderFunctionCallData:
    """A function call's name and JSON arguments."""

    name: str
    arguments: str | None


@dataclass(frozen=True, slots=True)
class ProviderToolCallData:
    """A tool call: its function and id."""

    function: ProviderFunctionCallData
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ProviderMessageData:
    """An answer's content parts, tool calls and parsed output."""

    content: str | Sequence[object] | None
    tool_calls: Sequence[ProviderToolCallData] | None
    parsed: object | None = None


@dataclass(frozen=True, slots=True)
class ProviderChoiceData:
    """One choice of an answer."""

    message: ProviderMessageData | None = None


def _fail(message: str, prompt_name: str, phase: Any, payload: dict[str, Any] | None = None) -> PromptEvaluationError:
    return PromptEvaluationError(message, prompt_name=prompt_name, phase=phase, provider_payload=payload)


def normalize_tool_arguments(arguments: object) -> str | None:
    """Arguments as a JSON string (a string as it is; what JSON cannot hold as ``str``)."""
    if arguments is None or isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments)
    except TypeError:
        return str(arguments)


def tool_call_from_output(output: object) -> ProviderToolCallData | None:
    """A ``function_call`` output item as a tool call (``None`` for anything else)."""
    name, arguments = getattr(output, "name", None), getattr(output, "arguments", None)
    if not isinstance(name, str) or arguments is None or getattr(output, "type", None) not in (None, "function_call"):
        return None
    call_id = str(getattr(output, "call_id", None) or getattr(output, "id", "")) or None
    return ProviderToolCallData(ProviderFunctionCallData(name, normalize_tool_arguments(arguments)), call_id)


def responses_tool_spec(spec: Mapping[str, Any], *, prompt_name: str) -> dict[str, Any]:
    """A Chat Completions function tool as a Responses API tool (``name`` at the top level)."""
    payload = {"tools": [spec]}
    if spec.get("type") != "function":
        raise _fail(
            "OpenAI Responses only supports function tools.", prompt_name, PROMPT_EVALUATION_PHASE_REQUEST, payload
        )
    function = spec.get("function")
    if not isinstance(function, Mapping):
        raise _fail(
            "OpenAI tool specification is missing a function payload.",
            prompt_name,
            PROMPT_EVALUATION_PHASE_REQUEST,
            payload,
        )
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _fail(
            "OpenAI tool specification is missing a function name.",
            prompt_name,
            PROMPT_EVALUATION_PHASE_REQUEST,
            payload,
        )
    normalized: dict[str, Any] = {"type": "function", "name": name}
    description = function.get("description")
    if isinstance(description, str) and description.strip():
        normalized["description"] = description
    if function.get("parameters") is not None:
        normalized["parameters"] = function["parameters"]
    if isinstance(function.get("strict"), bool):
        normalized["strict"] = function["strict"]
    return normalized


def responses_tool_choice(tool_choice: Any, *, prompt_name: str) -> Any:
    """A tool choice for the Responses API: strings as they are, a function choice as ``{"type", "name"}``."""
    if tool_choice is None or isinstance(tool_choice, str):
        return tool_choice
    choice = dict(tool_choice.items())
    payload = {"tool_choice": tool_choice}
    if choice.get("type") != "function":
        raise _fail(
            "OpenAI tool choice is not supported by the Responses API.",
            prompt_name,
            PROMPT_EVALUATION_PHASE_REQUEST,
            payload,
        )
    function = choice.get("function")
    name = function.get("name") if isinstance(function, Mapping) else choice.get("name")
    if isinstance(name, str) and name.strip():
        return {"type": "function", "name": name}
    raise _fail("OpenAI tool choice is missing a function name.", prompt_name, PROMPT_EVALUATION_PHASE_REQUEST, payload)


def _assistant_calls(tool_calls: Sequence[Mapping[str, Any]], prompt_name: str) -> list[dict[str, Any]]:
    calls = []
    for call in tool_calls:
        function = call.get("function")
        name = function.get("name") if isinstance(function, Mapping) else None
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        if not isinstance(name, str) or not isinstance(arguments, str):
            raise _fail(
                "OpenAI tool call is missing name or arguments.",
                prompt_name,
                PROMPT_EVALUATION_PHASE_REQUEST,
                {"tool_call": call},
            )
        call_id = call.get("id") or call.get("call_id")
        calls.append({"type": "function_call", "call_id": str(call_id or ""), "name": name, "arguments": arguments})
    return calls


def normalize_input_messages(messages: Sequence[Mapping[str, Any]], *, prompt_name: str) -> list[dict[str, Any]]:
    """Chat-style messages as Responses API input items (tool results become ``function_call_output``)."""
    items: list[dict[str, Any]] = []
    for message in messages:
        role, content, tool_calls = message.get("role"), message.get("content"), message.get("tool_calls")
        if role == "assistant" and tool_calls:
            if content:
                items.append({"type": "message", "role": "assistant", "content": content})
            items += _assistant_calls(tool_calls, prompt_name)
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id is None:
                raise _fail(
                    "OpenAI tool message is missing tool_call_id.",
                    prompt_name,
                    PROMPT_EVALUATION_PHASE_REQUEST,
                    {"message": message},
                )
            rest = {k: v for k, v in message.items() if k not in ("role", "tool_call_id", "content")}
            items.append({**rest, "type": "function_call_output", "call_id": str(call_id), "output": content or ""})
        elif role in ("assistant", "system", "developer", "user"):
            items.append({"type": "message", "role": role, "content": content or ""})
        else:
            items.append(dict(message))
    return items


def extract_all_tool_calls(response: object, *, prompt_name: str) -> tuple[list[ProviderToolCallData], Any, Any]:
    """``(tool calls, first output with content, first non-reasoning output)`` of a Responses API answer."""
    outputs = getattr(response, "output", None)
    if not isinstance(outputs, Sequence):
        raise _fail("Provider response did not include any output.", prompt_name, PROMPT_EVALUATION_PHASE_RESPONSE)
    calls: list[ProviderToolCallData] = []
    content_output: object | None = None
    fallback: object | None = None
    for output in outputs:
        if getattr(output, "type", None) == "reasoning":
            continue
        fallback = output if fallback is None else fallback
        call = tool_call_from_output(output)
        if call is not None:
            calls.append(call)
            continue
        content = getattr(output, "content", None)
        if content_output is None and isinstance(content, Sequence) and content:
            content_output = output
    return calls, content_output, fallback


def _parsed(parts: Sequence[object]) -> object | None:
    for part in parts:
        parsed: object | None = getattr(part, "parsed", None)
        if parsed is None and isinstance(part, Mapping):
            parsed = part.get("parsed")
        if parsed is not None:
            return parsed
    return None


def choice_from_response(response: object, *, prompt_name: str) -> ProviderChoiceData:
    """A Responses API answer as one choice: its tool calls, or its content parts and parsed output."""
    calls, content_output, fallback = extract_all_tool_calls(response, prompt_name=prompt_name)
    if calls:
        return ProviderChoiceData(ProviderMessageData(content=(), tool_calls=tuple(calls), parsed=None))
    target = content_output if content_output is not None else fallback
    content = getattr(target, "content", None) if target is not None else None
    if not isinstance(content, Sequence) or not content:
        raise _fail("Provider response did not include any content.", prompt_name, PROMPT_EVALUATION_PHASE_RESPONSE)
    parts = [dict(p) if isinstance(p, Mapping) else p for p in content]
    return ProviderChoiceData(ProviderMessageData(content=parts, tool_calls=None, parsed=_parsed(content)))
