"""The JSON body google-genai sends for ``generate_content(**payload)``, built without its pydantic models.

The SDK validates the payload into ``types._GenerateContentParameters``, runs its
Gemini API converter (``models._GenerateContentParameters_to_mldev``: camelCase
names in the converter's order, nested models it passes through dumped with
``model_dump(exclude_none=True)``, so snake_case in their fields' order), base64s
bytes (``_common.encode_unserializable_types``: URL-safe) and writes
``json.dumps`` of the result. ``body`` writes the same bytes for the payloads
llmplex builds (``request.format_request``): text, inline data, file data,
function calls and responses, thoughts and signatures, a system instruction,
function declarations, tool config, safety settings, JSON mode with a JSON
Schema, thinking config and the sampling options. Anything else, or a value
pydantic would coerce or refuse (a ``bool`` for a number, a ``None``, an enum
name in another case, a field it does not know), gives ``None``: the SDK's own
models then build the request. ``tests/speed/test_item_2_gemini_lean.py``
compares the bytes with what the SDK sends.
"""

from __future__ import annotations

import base64
import enum
import json
from collections.abc import Callable, Sequence
from json.encoder import encode_basestring_ascii
from typing import Any

import pydantic
from google.genai import types

__all__ = ["body", "lean_config"]


class _NotLeanError(Exception):
    """The payload holds something only the SDK's models build the same way."""


_Convert = Callable[[Any], Any]
_Field = tuple[int, str, _Convert]
"""``(position in the written object, wire key, converter)``."""


def _position(found: tuple[_Field, Any]) -> int:
    return found[0][0]


def _fail() -> Any:
    raise _NotLeanError


def _string(value: Any) -> Any:
    return value if type(value) is str else _fail()


def _flag(value: Any) -> Any:
    return value if type(value) is bool else _fail()


def _whole(value: Any) -> Any:
    return value if type(value) is int else _fail()


def _number(value: Any) -> Any:
    """pydantic's ``float``: an int becomes a float (``1`` is written ``1.0``)."""
    return float(value) if type(value) in (int, float) else _fail()


def _mapping(value: Any) -> Any:
    return value if type(value) is dict else _fail()


def _json(value: Any) -> Any:
    return value


def _strings(value: Any) -> Any:
    return value if type(value) is list and all(type(v) is str for v in value) else _fail()


def _enum(values: type[enum.Enum]) -> _Convert:
    names = frozenset(value.value for value in values)
    return lambda value: value if type(value) is str and value in names else _fail()


def _bytes(value: Any) -> Any:
    return base64.urlsafe_b64encode(value).decode("ascii") if type(value) is bytes else _fail()


def _signature(value: Any) -> Any:
    """A thought signature as the SDK's ``Part`` reads it (``bytes``), written URL-safe base64."""
    if type(value) is str:
        value = types.Part.model_validate({"thought_signature": value}).thought_signature
    return _bytes(value)


def _names(name: str) -> tuple[str, ...]:
    """A field's snake_case name and its camelCase alias: the SDK's models take either."""
    head, *rest = name.split("_")
    alias = head + "".join(word.title() for word in rest)
    return (name,) if alias == name else (name, alias)


def _object(fields: Sequence[tuple[str, str, _Convert]]) -> _Convert:
    """An object of only ``(wire key, field name, converter)`` fields, written in that order."""
    table: dict[str, _Field] = {
        name: (position, key, convert)
        for position, (key, field, convert) in enumerate(fields)
        for name in _names(field)
    }

    def convert(value: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise _NotLeanError
        found: list[tuple[_Field, Any]] = []
        for name, given in value.items():
            field = table.get(name)
            if field is None or given is None:
                raise _NotLeanError
            found.append((field, given))
        if len(found) > 1:
            found.sort(key=_position)
            if len({field[0] for field, _ in found}) < len(found):
                raise _NotLeanError  # a field given by both its names
        return {key: write(given) for (_, key, write), given in found}

    return convert


def _list(item: _Convert, *, empty: bool = True) -> _Convert:
    def convert(value: Any) -> list[Any]:
        if type(value) is not list or not (empty or value):
            raise _NotLeanError
        return [item(v) for v in value]

    return convert


def _dumped(model: type[pydantic.BaseModel], converters: dict[str, _Convert]) -> _Convert:
    """A model the converter passes through whole: ``model_dump`` order and snake_case names."""
    return _object([(name, name, converters[name]) for name in model.model_fields if name in converters])


_FUNCTION_CALL = _object([("id", "id", _string), ("args", "args", _mapping), ("name", "name", _string)])
_PART = _object(
    [
        ("fileData", "file_data", _dumped(types.FileData, {"file_uri": _string, "mime_type": _string})),
        ("functionCall", "function_call", _FUNCTION_CALL),
        (
            "functionResponse",
            "function_response",
            _dumped(types.FunctionResponse, {"id": _string, "name": _string, "response": _mapping}),
        ),
        ("inlineData", "inline_data", _dumped(types.Blob, {"data": _bytes, "mime_type": _string})),
        ("text", "text", _string),
        ("thought", "thought", _flag),
        ("thoughtSignature", "thought_signature", _signature),
    ]
)


def _part(value: Any) -> Any:
    return _PART(value) if value else _fail()


_CONTENT = _object([("parts", "parts", _list(_part, empty=False)), ("role", "role", _string)])
_TOOL = _object(
    [
        (
            "functionDeclarations",
            "function_declarations",
            _list(
                _dumped(
                    types.FunctionDeclaration,
                    {"description": _string, "name": _string, "parameters_json_schema": _json},
                )
            ),
        )
    ]
)
_TOOL_CONFIG = _object(
    [
        (
            "functionCallingConfig",
            "function_calling_config",
            _object(
                [
                    ("allowedFunctionNames", "allowed_function_names", _strings),
                    ("mode", "mode", _enum(types.FunctionCallingConfigMode)),
                ]
            ),
        )
    ]
)
_SAFETY = _object(
    [
        ("category", "category", _enum(types.HarmCategory)),
        ("threshold", "threshold", _enum(types.HarmBlockThreshold)),
    ]
)
_THINKING = _dumped(
    types.ThinkingConfig,
    {"include_thoughts": _flag, "thinking_budget": _whole, "thinking_level": _enum(types.ThinkingLevel)},
)


def _instruction(value: Any) -> Any:
    """A system instruction given as text: the SDK's ``t_content`` makes it one user turn of one part."""
    return {"parts": [{"text": value}], "role": "user"} if type(value) is str and value else _fail()


_TOP_LEVEL = _object(
    [
        ("systemInstruction", "system_instruction", _instruction),
        ("safetySettings", "safety_settings", _list(_SAFETY)),
        ("tools", "tools", _list(_TOOL)),
        ("toolConfig", "tool_config", _TOOL_CONFIG),
    ]
)
_GENERATION = _object(
    [
        ("temperature", "temperature", _number),
        ("topP", "top_p", _number),
        ("topK", "top_k", _number),
        ("candidateCount", "candidate_count", _whole),
        ("maxOutputTokens", "max_output_tokens", _whole),
        ("stopSequences", "stop_sequences", _strings),
        ("presencePenalty", "presence_penalty", _number),
        ("frequencyPenalty", "frequency_penalty", _number),
        ("seed", "seed", _whole),
        ("responseMimeType", "response_mime_type", _string),
        ("responseJsonSchema", "response_json_schema", _json),
        ("thinkingConfig", "thinking_config", _THINKING),
    ]
)
_REQUEST_ONLY = {"automatic_function_calling", "automatic_continuation", "http_options"}
"""Config fields that shape the call, not the body; ``lean_config`` vouches for their values."""
_BODY_FIELDS = frozenset(
    name for field in ("system_instruction", "safety_settings", "tools", "tool_config") for name in _names(field)
)


_PAYLOAD_KEYS = frozenset({"model", "contents", "config"})
_GENERATION_TAIL = ', "generationConfig": {}}'
"""The end of a body whose config holds only ``_REQUEST_ONLY`` fields: an empty ``generationConfig``."""
_quoted = encode_basestring_ascii
"""A string as ``json.dumps`` writes it (``ensure_ascii``)."""


def _text_contents(contents: Any) -> str | None:
    """``contents`` as ``body`` writes them (``json.dumps`` of ``_CONTENT``'s) when every turn is a role and text
    parts and nothing else: without a converter a field; ``None`` for any other."""
    if type(contents) is not list or not contents:
        return None
    turns = []
    for turn in contents:
        if type(turn) is not dict or len(turn) != 2:
            return None
        role, parts = turn.get("role"), turn.get("parts")
        if type(role) is not str or type(parts) is not list or not parts:
            return None
        texts = []
        for part in parts:
            text = part.get("text") if type(part) is dict and len(part) == 1 else None
            if type(text) is not str:
                return None
            texts.append(f'{{"text": {_quoted(text)}}}')
        turns.append(f'{{"parts": [{", ".join(texts)}], "role": {_quoted(role)}}}')
    return f"[{', '.join(turns)}]"


def lean_config(config: Any) -> tuple[bool, int | None]:
    """Whether ``config`` asks for nothing beyond plain requests (automatic function calling off or unset,
    automatic continuation a ``bool`` or unset, HTTP options holding at most a timeout in whole milliseconds), and
    that per-call timeout (``None``: the client's)."""
    if config is None:
        return True, None
    if type(config) is not dict or type(config.get("automatic_continuation", True)) is not bool:
        return False, None
    options = config.get("http_options", {})
    if config.get("automatic_function_calling", {"disable": True}) != {"disable": True} or type(options) is not dict:
        return False, None
    if not options:
        return True, None
    timeout = options.get("timeout")
    return set(options) == {"timeout"} and type(timeout) is int and timeout >= 0, timeout


def body(payload: dict[str, Any]) -> bytes | None:
    """The body bytes the SDK sends for ``payload`` (``{"model", "contents", "config"}``), or ``None``."""
    if not _PAYLOAD_KEYS.issuperset(payload):
        return None
    config = payload.get("config")
    if config is None or (type(config) is dict and _REQUEST_ONLY.issuperset(config)):
        texts = _text_contents(payload.get("contents"))
        if texts is not None:  # a conversation of text parts (a prompt): written at once, as below
            return f'{{"contents": {texts}{_GENERATION_TAIL if config else "}"}'.encode()
    try:
        written: dict[str, Any] = {"contents": _list(_CONTENT, empty=False)(payload.get("contents"))}
        if config is not None and type(config) is not dict:
            return None
        if config:  # an empty config is none to the SDK (no ``generationConfig``)
            rest = {key: value for key, value in config.items() if key not in _REQUEST_ONLY}
            written.update(_TOP_LEVEL({key: value for key, value in rest.items() if key in _BODY_FIELDS}))
            written["generationConfig"] = _GENERATION({k: v for k, v in rest.items() if k not in _BODY_FIELDS})
    except _NotLeanError:
        return None
    return json.dumps(written).encode()
