"""Scrub secrets from anything that may be shown: error messages, bodies, events, logs.

Two nets: every secret value core has seen in provider settings is registered
with :func:`register_secret`, and well-known key shapes (``sk-...``, bearer
tokens, Google ``AIza...`` keys) are masked even when core never saw them.
"""

from __future__ import annotations

import re
import threading
from typing import TypeVar

__all__ = ["REDACTED", "redact", "register_secret"]

REDACTED = "***"

_KEY_SHAPES = re.compile(
    r"(sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{8,})"
    r"|(AIza[0-9A-Za-z_\-]{20,})"
    r"|((?i:bearer)\s+[A-Za-z0-9._\-]{8,})"
)
_SECRET_KEYS = re.compile(r"(?i)(api[_-]?key|authorization|secret|password|token)$")
_MIN_SECRET_LENGTH = 8
"""Shorter values are placeholders ("test", "none"), not keys: masking them would garble every message."""

_lock = threading.Lock()
_secrets: frozenset[str] = frozenset()

T = TypeVar("T")


def register_secret(value: str | None) -> None:
    """Remember a secret so that :func:`redact` masks it wherever it appears."""
    global _secrets
    if value and len(value) >= _MIN_SECRET_LENGTH and value not in _secrets:
        with _lock:
            _secrets = _secrets | {value}


def _redact_text(text: str) -> str:
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return _KEY_SHAPES.sub(REDACTED, text)


def redact(value: T) -> T:
    """Return ``value`` with secrets masked; walks strings, mappings, lists and tuples."""
    if isinstance(value, str):
        return _redact_text(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {  # type: ignore[return-value]
            k: (REDACTED if isinstance(k, str) and _SECRET_KEYS.search(k) and v else redact(v))
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v) for v in value)
    return value
