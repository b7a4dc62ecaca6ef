"""What ``llmplex batch`` shows on stderr while it runs: a progress bar, status lines, or nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal

import click

from llmplex.cli.output import plain_console
from llmplex.types import BatchStatus

if TYPE_CHECKING:
    from rich.progress import Progress, Task, TaskID

__all__ = ["BatchProgress", "Mode", "batch_progress", "describe_status"]

Mode = Literal["bar", "lines", "off"]


def describe_status(batch_id: str, status: BatchStatus) -> str:
    """``batch_abc: in_progress (total 10, completed 3, failed 1)``: the provider's own words and counts."""
    counts = ", ".join(f"{name} {count}" for name, count in status.counts.items())
    return f"{batch_id}: {status.status}" + (f" ({counts})" if counts else "")


class BatchProgress:
    """``advance()`` once per finished request; ``batch(id, status)`` whenever a provider batch is polled.

    On a bar, the latest provider status is the bar's description; in ``lines``
    mode each change of a batch's status or counts is one line on stderr.
    """

    def __init__(self, mode: Mode, bar: Progress | None = None, task: TaskID | None = None) -> None:
        self.mode = mode
        self._bar = bar
        self._task = task
        self._seen: dict[str, str] = {}

    def advance(self) -> None:
        """One more request finished."""
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task)

    def batch(self, batch_id: str, status: BatchStatus) -> None:
        """Show where provider batch ``batch_id`` stands, if it changed."""
        text = describe_status(batch_id, status)
        if self._seen.get(batch_id) == text:
            return
        self._seen[batch_id] = text
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=text)
        elif self.mode == "lines":
            click.echo(f"batch {text}", err=True)


@contextmanager
def batch_progress(mode: Mode, total: int, completed: int) -> Iterator[BatchProgress]:
    """A ``BatchProgress``: a rich bar with rate and ETA on stderr (``bar``), status lines, or nothing."""
    if mode != "bar":
        yield BatchProgress(mode)
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:.1f} req/s" if speed else "- req/s", style="progress.data.speed")

    columns = (
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TextColumn("ETA", markup=False),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=plain_console(stderr=True)) as bar:
        yield BatchProgress(mode, bar, bar.add_task("batch", total=total, completed=completed))
