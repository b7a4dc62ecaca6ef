"""One URL path segment from a name a caller gave (a model, a deployment, a project): it never steers the URL.

A plugin that puts a model name into the path builds it with ``path_segment``:
``/``, ``?``, ``#``, ``%``, ``@``... are percent-encoded, so they stay inside the
segment, and a name that no provider gives (empty, holding ``..``, whitespace or
a control character) is refused with ``LLMConfigurationError`` before any URL
is built.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from urllib.parse import quote

from llmplex.errors import LLMConfigurationError

__all__ = ["check_name", "path_segment"]


def check_name(value: str, what: str) -> str:
    """``value`` when it can name something in a URL; else ``LLMConfigurationError`` saying ``what`` it is.

    Refused: empty, holding ``..`` (a dot segment once decoded), whitespace or a control character.
    """
    problem = _problem(value)
    if problem is not None:
        raise LLMConfigurationError(
            f"the {what} {value!r} {problem}, so it cannot be put into a URL; give the {what} as the provider "
            "names it (letters, digits, '-', '_', '.', '@', ':')"
        )
    return value


@lru_cache(maxsize=256)
def _problem(value: str) -> str | None:
    """What keeps ``value`` out of a URL, or ``None``; kept per name (every call names its model, and reading each
    character costs about 15 µs for a 40-character id)."""
    if not value:
        return "is empty"
    if ".." in value:
        return "holds '..'"
    if any(c.isspace() or unicodedata.category(c)[0] == "C" for c in value):
        return "holds whitespace or a control character"
    return None


def path_segment(value: str, what: str, *, safe: str = "@:") -> str:
    """``value`` as one percent-encoded path segment (``safe``: the characters kept as they are), after
    ``check_name``."""
    return quote(check_name(value, what), safe=safe)
