"""Looking into request bodies without knowing the provider's wire format."""

from __future__ import annotations

import json
import re
import types
from collections.abc import Mapping, Sequence
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr

__all__ = ["OPTION_VALUES", "OPTION_WIRE_NAMES", "appears_in_order", "option_keys", "secretish_fields_not_secret"]

OPTION_VALUES: Mapping[str, Any] = {
    "temperature": 0.37,
    "top_p": 0.83,
    "max_tokens": 123,
    "presence_penalty": 0.21,
    "frequency_penalty": 0.19,
    "stop": ("KITSTOP",),
    "seed": 4242,
}
"""One distinctive value per core option, easy to find in a request body."""

OPTION_WIRE_NAMES = frozenset(
    {
        "temperature",
        "top_p",
        "topP",
        "max_tokens",
        "max_completion_tokens",
        "max_output_tokens",
        "maxOutputTokens",
        "presence_penalty",
        "presencePenalty",
        "frequency_penalty",
        "frequencyPenalty",
        "stop",
        "stop_sequences",
        "stopSequences",
        "seed",
    }
)
"""How providers name the core options on the wire."""

_SECRETISH = re.compile(r"(?i)(^|_)(api_?key|key|token|secret|password)$")


def wire_text(payload: Any) -> str:
    """A body as JSON text (bytes are decoded; anything else JSON-encoded, falling back to ``str``)."""
    if isinstance(payload, bytes):
        return payload.decode("utf-8", "replace")
    if isinstance(payload, str):
        return payload
    return json.dumps(payload, default=str, ensure_ascii=False)


def option_keys(payload: Any) -> set[str]:
    """Option names used as keys anywhere in ``payload`` (JSON Schemas excepted)."""
    found: set[str] = set()
    if isinstance(payload, Mapping):
        for key, value in payload.items():
            if key in OPTION_WIRE_NAMES:
                found.add(str(key))
            if key not in ("properties", "parameters", "schema", "json_schema", "input_schema"):
                found |= option_keys(value)
    elif isinstance(payload, Sequence) and not isinstance(payload, (str, bytes)):
        for item in payload:
            found |= option_keys(item)
    return found


def appears_in_order(text: str, parts: Sequence[str]) -> bool:
    """Whether every part occurs in ``text``, each after the previous one."""
    position = 0
    for part in parts:
        position = text.find(part, position)
        if position < 0:
            return False
        position += len(part)
    return True


def _mentions_secret_str(annotation: Any) -> bool:
    if annotation is SecretStr:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return any(_mentions_secret_str(arg) for arg in get_args(annotation))
    return False


def secretish_fields_not_secret(model: type[BaseModel]) -> list[str]:
    """Fields named like keys or tokens that are not typed ``SecretStr``."""
    return [
        name
        for name, info in model.model_fields.items()
        if _SECRETISH.search(name) and not _mentions_secret_str(info.annotation)
    ]
