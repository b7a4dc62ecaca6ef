"""Find the JSON value in a model's text answer: strip code fences, take the first JSON value."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["extract_json"]

_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_decoder = json.JSONDecoder()


def extract_json(text: str) -> Any:
    """The first JSON value in ``text``; raises ``ValueError`` when there is none."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        found, value = _first_value(candidate)
        if found:
            return value
    raise ValueError("the answer contains no JSON value")


def _first_value(text: str) -> tuple[bool, Any]:
    stripped = text.strip()
    try:
        return True, json.loads(stripped)
    except ValueError:
        pass
    for start, char in enumerate(text):
        if char in "{[":
            try:
                return True, _decoder.raw_decode(text, start)[0]
            except ValueError:
                continue
    return False, None
