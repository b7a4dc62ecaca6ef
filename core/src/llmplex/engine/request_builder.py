"""Turn what a user passes to ``complete`` into a validated core Request."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from llmplex.errors import LLMBadRequestError, LLMConfigurationError
from llmplex.types import LLMConfig, Message, OutputSchema, Request, Tool
from llmplex.types.parts import ContentPart, MediaPart
from llmplex.types.request import plain_request

__all__ = [
    "PromptInput",
    "ToolInput",
    "build_messages",
    "build_options",
    "build_request",
    "build_tools",
    "prompt_request",
]

PromptInput = str | Message | Mapping[str, Any] | Sequence[Message | Mapping[str, Any]] | Sequence[ContentPart]
"""Text, one message, a list of messages, or a list mixing text with images, documents and audio (one user turn)."""
ToolInput = Tool | Mapping[str, Any] | Callable[..., Any]
_OPTION_NAMES = tuple(LLMConfig.model_fields)
_MESSAGE_KEYS = frozenset(Message.model_fields)
_NO_OPTIONS: LLMConfig = Request.model_fields["config"].default
"""No sampling options: the ``Request``'s default (one instance, so a check can compare identities)."""


def _problems(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']} (found {e.get('input')!r:.60})"
        for e in error.errors(include_url=False)
    )


def build_messages(prompt: PromptInput, system: str | None = None) -> tuple[Message, ...]:
    """A prompt string, one message, a list of messages (``Message`` or dicts), or a list mixing
    text with image, document and audio parts (one user message) as messages.

    Nothing empty is sent: a blank prompt, an empty list, or a user or system
    message without text is an ``LLMConfigurationError``; text that is not valid
    Unicode (a lone surrogate) is an ``LLMBadRequestError``.
    """
    if system is not None and not isinstance(system, str):
        raise LLMConfigurationError(f"system must be a string (the system prompt), got {type(system).__name__}")
    if isinstance(prompt, str) and system is None:  # the commonest call: only the text to check
        _check_text(prompt, "the prompt", "user")
        return (Message(role="user", content=prompt),)
    # a list with an image, document or audio part is one user turn; a list of bare strings stays a mistake
    one_turn = isinstance(prompt, Sequence) and any(isinstance(item, MediaPart) for item in prompt)
    if isinstance(prompt, str):
        items: Sequence[Any] = [Message(role="user", content=prompt)]
    elif isinstance(prompt, (Message, Mapping)):
        items = [prompt]
    elif one_turn:
        items = [_user_turn(prompt)]
    elif isinstance(prompt, Sequence):
        items = prompt
    else:
        raise LLMConfigurationError(
            f"prompt must be a string, a Message, or a list of messages (or of text and parts); "
            f"got {type(prompt).__name__}"
        )
    if not items:
        raise LLMConfigurationError("no messages to send: the list of messages is empty; give a user message")
    messages = [] if system is None else [(Message(role="system", content=system), "system")]
    for index, item in enumerate(items):
        where = "the prompt" if isinstance(prompt, str) or one_turn else f"messages[{index}]"
        messages.append((_message(item, where), where))
    for message, where in messages:
        _check_content(message, where)
        for call in message.tool_calls:
            _check_text(call.arguments, f"{where} (tool call {call.name!r})", "tool")
    return tuple(message for message, _ in messages)


def _user_turn(prompt: Sequence[Any]) -> Message:
    """A list of text and parts as one user message; a message among them is a mistake, said plainly."""
    for index, item in enumerate(prompt):
        if not isinstance(item, (str, MediaPart)):
            raise LLMConfigurationError(
                f"prompt[{index}] is a {type(item).__name__} in a list of text and parts; a prompt list holds "
                "either messages or text with llmplex.Image / Document / Audio parts (one user turn), not both"
            )
    return Message.user(prompt)


def _check_content(message: Message, where: str) -> None:
    """Text content is checked whole; in a list, every text piece is, and the list must not be empty."""
    if not isinstance(message.content, tuple):
        _check_text(message.content, where, message.role)
        return
    if not message.content:
        _check_text(None, where, message.role)
    for index, piece in enumerate(message.content):
        if isinstance(piece, str):
            _check_text(piece, f"{where} (text at position {index})", message.role)


def _message(item: Any, where: str) -> Message:
    if isinstance(item, Message):
        return item
    unknown = sorted(set(item) - _MESSAGE_KEYS) if isinstance(item, Mapping) else []
    if unknown:
        raise LLMConfigurationError(
            f"{where} has unknown key {', '.join(map(repr, unknown))}; a message has {', '.join(sorted(_MESSAGE_KEYS))}"
        )
    try:
        return Message.model_validate(item)
    except LLMConfigurationError as exc:  # each wrong argument named (a dict of them, or not a dict at all)
        raise LLMConfigurationError(
            f"{where} is not a valid message ({exc.message}); "
            "use {'role': 'user'|'assistant'|'system'|'tool', 'content': '...'}"
        ) from None


def _check_text(text: str | None, where: str, role: str) -> None:
    """A user or system turn must have text; any text must be valid Unicode (no lone surrogate)."""
    if role in ("user", "system") and (not text or text.isspace()):
        state = "has no content" if text is None else "is empty" if not text else "is only whitespace"
        label = where if where.startswith("the prompt") or where == "system" else f"{where} ({role})"
        leave_out = ", or leave it out" if role == "system" else ""
        raise LLMConfigurationError(f"{label} {state}; blank text is never sent: give it text{leave_out}")
    if text is None or text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise LLMBadRequestError(
            f"{where} is not valid Unicode: a lone surrogate U+{ord(text[exc.start]):04X} at character {exc.start} "
            "(invalid UTF-8 bytes decoded with errors='surrogateescape' give these); fix the text's encoding"
        ) from None


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
        except LLMConfigurationError as exc:  # a name providers reject, or a $ref to nothing
            raise LLMConfigurationError(f"tools[{index}] is not a valid tool: {exc}") from None
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
    cache: bool | None = None,
    cache_key: str | None = None,
) -> Request:
    """Validate every part and assemble the Request a provider will format (a prompt string with every keyword at
    its default, as a call given only ``timeout=`` or ``fallbacks=`` makes it, as ``prompt_request`` builds it)."""
    if (
        system is None
        and tools is None
        and tool_choice is None
        and output is None
        and provider_options is None
        and previous_response_id is None
        and not options
        and cache is None
        and cache_key is None
        and (plain := _plain(model, prompt, stream)) is not None
    ):
        return plain
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
        cache=_cache_flag(cache),
        cache_key=_cache_key(cache_key),
    )


def prompt_request(model: str, prompt: PromptInput, stream: bool) -> Request:
    """``build_request(model, prompt, stream=stream)``: a call without keyword arguments. A prompt string, the
    commonest, is checked and goes into a request built without validating it all again."""
    plain = _plain(model, prompt, stream)
    return build_request(model, prompt, stream=stream) if plain is None else plain


def _plain(model: str, prompt: PromptInput, stream: bool) -> Request | None:
    """The request of a prompt string without keyword arguments, checked, built without validating it all again;
    ``None`` for any other prompt."""
    if type(prompt) is not str or type(model) is not str:
        return None
    _check_text(prompt, "the prompt", "user")
    return plain_request(model, prompt, stream)


def _cache_flag(cache: object) -> bool | None:
    if cache is not None and not isinstance(cache, bool):
        raise LLMConfigurationError(f"cache must be True, False or None, got {cache!r}")
    return cache


def _cache_key(key: object) -> str | None:
    if key is not None and (not isinstance(key, str) or not key):
        raise LLMConfigurationError(f"cache_key must be a non-empty string, got {key!r}")
    return key
