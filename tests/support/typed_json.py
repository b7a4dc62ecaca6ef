"""JSON values with the type of every number and string in them, so tests can tell ``1`` from ``1.0`` (equal in
Python) when they compare what two decoders read."""

from __future__ import annotations

from typing import Any

__all__ = ["typed"]


def typed(value: Any) -> Any:
    """``value`` with each number and string as ``(type name, value)``, inside its dicts and lists."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return type(value).__name__, value
