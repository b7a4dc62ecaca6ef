"""The rich console the CLI prints tables and progress through: text shows exactly as written."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["plain_console"]


def plain_console(*, stderr: bool = False, width: int | None = None) -> Console:
    """A console that never reads user or config text as markup (``[red]``), emoji codes (``:ok:``)
    or highlights: model names, config keys, paths and error messages print as they are."""
    from rich.console import Console

    return Console(stderr=stderr, width=width, markup=False, emoji=False, highlight=False)
