"""Turn what a user passes to ``complete`` into a validated core Request."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from llmplex.errors import LLMConfigurationError
from llmplex.types import LLMConfig, Message, OutputSchema, Request, Tool

__all__ = ["PromptInput", "ToolInput", "build_messages", "build_options", "build_request", "build_tools"]

PromptInput = str | Message | Mapping[str, Any] | Sequence[Message | Mapping[str, Any]]
ToolInput = Tool | Mapping[str, Any] | Callable[..., Any]
_OPTION_NAMES = tuple(LLMConfig.model_fields)
_MESSAGE_KEYS = frozenset(Message.model_fields)
_NO_OPTIONS = LLMConfig()


def _problems(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']} (found {e.get('input')!r:.60})"
        for e in error.errors(include_url=False)
    )


def build_messages(prompt: PromptInput, system: str | None = None) -> tuple[Message, ...]:
    """A prompt string, one message, or a list of messages (``Message`` or dicts) as messages."""
    if system is not None and not isinstance(system, str):
        raise LLMConfigurationError(f"system must be a string (the system prompt), got {type(system).__name__}")
    if isinstance(prompt, str) and system is None:
        return (Message(role="user", content=prompt),)  # the commonest call: nothing else to check
    if isinstance(prompt, str):
        items: Sequence[Any] = [Message(role="user", content=prompt)]
    elif isinstance(prompt, (Message, Mapping)):
        items = [prompt]
    elif isinstance(prompt, Sequence):
        items = prompt
    else:
        raise LLMConfigurationError(
            f"prompt must be a string, a Message, or a list of messages; got {type(prompt).__name__}"
        )
    messages: list[Message] = [] if system is None else [Message(role="system", content=system)]
    for index, item in enumerate(items):
        if isinstance(item, Message):
            messages.append(item)
            continue
        unknown = sorted(set(item) - _MESSAGE_KEYS) if isinstance(item, Mapping) else []
        if unknown:
            raise LLMConfigurationError(
                f"messages[{index}] has unknown key {', '.join(map(repr, unknown))}; "
                f"a message has {', '.join(sorted(_MESSAGE_KEYS))}"
            )
        try:
            messages.append(Message.model_validate(item))
        except ValidationError as exc:
            raise LLMConfigurationError(
                f"messages[{index}] is not a valid message ({_problems(exc)}); "
                "use {'role': 'user'|'assistant'|'system'|'tool', 'content': '...'}"
            ) from None
        if messages[-1].content is None and messages[-1].role in ("user", "system"):
            raise LLMConfigurationError(f"messages[{index}] ({messages[-1].role}) has no content; give it 'content'")
    if not messages:
        raise LLMConfigurationError("no messages to send: give a prompt string or a non-empty list of messages")
    return tuple(messages)


def build_options(options: Mapping[str, Any]) -> LLMConfig:
    """Sampling options by keyword, checked by name and range."""
    if not options:
        return _NO_OPTIONS
    unknown = sorted(set(options) - set(_OPTION_NAMES))
    if unknown:
        raise LLMConfigurationError(
            f"unknown option {', '.join(map(repr, unknown))}; valid options: {', '.join(_OPTION_NAMES)} "
            "(provider-specific ones go in provider_options={...})"
        )
    try:
        return LLMConfig.model_validate(dict(options))
    except ValidationError as exc:
        raise LLMConfigurationError(f"invalid option: {_problems(exc)}") from None


def build_tools(tools: Sequence[ToolInput] | None) -> tuple[Tool, ...]:
    """Tools as ``Tool`` objects, ``{"name", "description", "parameters"}`` dicts or typed functions."""
    if not tools:
        return ()
    built: list[Tool] = []
    for index, tool in enumerate(tools):
        if isinstance(tool, Tool):
            built.append(tool)
            continue
        if callable(tool):
            built.append(Tool.from_function(tool))
            continue
        try:
            built.append(Tool.model_validate(tool))
        except ValidationError as exc:
            raise LLMConfigurationError(f"tools[{index}] is not a valid tool: {_problems(exc)}") from None
    for index, tool in enumerate(built):
        problem = _parameters_problem(json.dumps(tool.parameters, sort_keys=True, default=repr))
        if problem:
            raise LLMConfigurationError(f"tools[{index}] ({tool.name!r}) parameters are not usable: {problem}")
    return tuple(built)


@functools.lru_cache(maxsize=256)
def _parameters_problem(schema_json: str) -> str | None:
    """Why a tool's parameters (as canonical JSON) are not a valid JSON Schema of an object, or ``None``."""
    from llmplex.structured.schema import schema_problem

    schema = json.loads(schema_json)
    problem = schema_problem(schema)
    if problem:
        return problem
    if schema.get("type", "object") != "object":
        return f"the schema must describe an object (type 'object'), not type {schema['type']!r}"
    return None


def build_request(
    model: str,
    prompt: PromptInput,
    *,
    system: str | None = None,
    tools: Sequence[ToolInput] | None = None,
    tool_choice: str | None = None,
    output: OutputSchema | None = None,
    provider_options: Mapping[str, Any] | None = None,
    previous_response_id: str | None = None,
    stream: bool = False,
    options: Mapping[str, Any] | None = None,
) -> Request:
    """Validate every part and assemble the Request a provider will format."""
    built_tools = build_tools(tools)
    if tool_choice not in (None, "auto", "none", "required") and tool_choice not in {t.name for t in built_tools}:
        raise LLMConfigurationError(
            f"tool_choice {tool_choice!r} is neither 'auto', 'none', 'required' nor the name of a given tool"
        )
    if provider_options is not None and not isinstance(provider_options, Mapping):
        raise LLMConfigurationError(
            f"provider_options must be a mapping such as {{'user': 'u-1'}}, got {type(provider_options).__name__}"
        )
    if previous_response_id is not None and not isinstance(previous_response_id, str):
        raise LLMConfigurationError(
            f"previous_response_id must be a response id (a string), got {type(previous_response_id).__name__}"
        )
    return Request(
        model=model,
        messages=build_messages(prompt, system),
        tools=built_tools,
        tool_choice=tool_choice,
        output=output,
        config=build_options(options or {}),
        provider_options=dict(provider_options or {}),
        previous_response_id=previous_response_id,
        stream=stream,
    )
