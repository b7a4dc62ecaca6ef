"""How config errors speak: TOML's type names and literals, never Python's."""

from __future__ import annotations

import datetime
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["KEY_ERROR", "describe", "dotted_key", "expected", "toml_literal"]

KEY_ERROR = "llmplex_config_key"
"""Error type of a validator's own problem; its context names the ``key`` and what was ``found``."""

_MAX_SHOWN = 80
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_KINDS: tuple[tuple[str, frozenset[str]], ...] = (
    ("a string", frozenset({"string_type", "string_unicode", "secret_str_type"})),
    ("an integer", frozenset({"int_type", "int_parsing", "int_from_float", "int_parsing_size"})),
    ("a number", frozenset({"float_type", "float_parsing", "decimal_type", "decimal_parsing"})),
    ("a finite number (inf and nan are not allowed)", frozenset({"finite_number"})),
    ("true or false", frozenset({"bool_type", "bool_parsing"})),
    ("an array", frozenset({"list_type", "tuple_type", "set_type", "frozen_set_type", "iterable_type"})),
    ("a table", frozenset({"dict_type", "model_type", "model_attributes_type", "dataclass_type", "mapping_type"})),
    ("a date", frozenset({"date_type", "date_parsing", "date_from_datetime_parsing"})),
    ("a date-time", frozenset({"datetime_type", "datetime_parsing", "datetime_from_date_parsing"})),
)
_BOUNDS = {
    "greater_than": ("gt", "greater than"),
    "greater_than_equal": ("ge", "at least"),
    "less_than": ("lt", "less than"),
    "less_than_equal": ("le", "at most"),
}


def toml_literal(value: Any) -> str:
    """``value`` written as TOML would write it (``None``, which TOML lacks, as ``nothing``)."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(str(k))} = {toml_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple, set, frozenset)):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    return f"a value of Python type {type(value).__name__}"


def _kind(value: Any) -> str:
    if value is None:
        return ""
    for kind, types in (
        ("", (bool,)),
        ("the integer ", (int,)),
        ("the number ", (float,)),
        ("the string ", (str,)),
        ("the date-time ", (datetime.datetime,)),
        ("the date ", (datetime.date,)),
        ("the time ", (datetime.time,)),
        ("the table ", (Mapping,)),
        ("the array ", (list, tuple, set, frozenset)),
    ):
        if isinstance(value, types):
            return kind
    return ""


def describe(value: Any) -> str:
    """What was found, in TOML words: ``the string "fast"``, ``the array ["x"]``, ``nothing``."""
    text = toml_literal(value)
    if len(text) > _MAX_SHOWN:
        text = text[: _MAX_SHOWN - 3] + "..."
    return _kind(value) + text


def _key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else json.dumps(name, ensure_ascii=False)


def dotted_key(path: Sequence[str | int]) -> str:
    """``path`` as a TOML dotted key, array items by position: ``fallbacks."openai:gpt-4o"[0]``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{_key(part)}" if text else _key(part)
    return text


def expected(problem: Mapping[str, Any]) -> str:
    """What one pydantic problem says was expected, in TOML terms."""
    kind, ctx = problem["type"], problem.get("ctx") or {}
    for words, types in _KINDS:
        if kind in types:
            return f"expected {words}"
    if kind in _BOUNDS:
        name, words = _BOUNDS[kind]
        bound = ctx.get(name)
        if isinstance(bound, float) and bound.is_integer():
            bound = int(bound)
        return f"expected a number {words} {toml_literal(bound)}"
    if kind == "missing":
        return "required, but not set"
    if kind == KEY_ERROR:
        return str(ctx["message"])
    if kind == "value_error":
        return str(ctx.get("error", problem["msg"])).removeprefix("Value error, ")
    message = str(problem["msg"])
    for python, plain in (("Input should be", "expected"), ("List should", "the array should")):
        message = message.replace(python, plain)
    return message[:1].lower() + message[1:]
