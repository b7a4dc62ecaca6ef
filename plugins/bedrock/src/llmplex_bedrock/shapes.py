"""Converters compiled from botocore's shapes, once per shape: what the lean reader and the lean serializer share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Convert", "ShapeCompiler"]

Convert = Callable[[Any], Any]
"""A compiled converter of one shape's values."""


class ShapeCompiler:
    """Builds each shape's converter once (``_build``, by the subclass); a recursive shape's converter calls the
    one being built through a forward reference."""

    def __init__(self) -> None:
        self._done: dict[str, Convert] = {}

    def convert(self, shape: Any) -> Convert:
        """The converter of ``shape`` (built on first use)."""
        name = shape.name
        if name not in self._done:

            def forward(value: Any) -> Any:  # what a recursive shape calls before its converter is built
                return self._done[name](value)

            self._done[name] = forward
            self._done[name] = self._build(shape)
        return self._done[name]

    def _build(self, shape: Any) -> Convert:
        raise NotImplementedError
