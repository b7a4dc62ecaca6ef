"""Mutable state shared by tool handlers, with all-or-nothing changes per tool call."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolContext"]


@dataclass
class ToolContext:
    """What a handler receives when it declares a parameter annotated ``ToolContext``.

    ``state`` is snapshotted before each tool runs and restored when the tool
    raises or returns a result with no JSON form, so a failed tool leaves no
    trace; ``resources`` (connections, clients, ...) are shared as they are and
    never copied. Handlers that take the context run one at a time, so each
    sees a consistent state.
    """

    state: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, Any] = field(default_factory=dict)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Undo every change to ``state`` made inside the block if it raises."""
        snapshot = copy.deepcopy(self.state)
        try:
            yield
        except BaseException:
            self.state.clear()
            self.state.update(snapshot)
            raise
