"""``llmplex batch``: a JSONL file of requests in, a JSONL file of results out, resumable."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from llmplex.batching.journal import Journal
from llmplex.batching.records import error_record, result_record
from llmplex.batching.requests_file import FileRequest, read_requests
from llmplex.batching.run import DEFAULT_CONCURRENCY, BatchResult, abatch
from llmplex.cli.exit_codes import BATCH_ALL_FAILED, BATCH_INTERRUPTED, BATCH_SOME_FAILED
from llmplex.cli.output import plain_console
from llmplex.client import Client
from llmplex.errors import LLMConfigurationError, LLMError

if TYPE_CHECKING:
    from rich.progress import Task

__all__ = ["batch_command"]


@click.command("batch")
@click.argument("requests_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Results JSONL.")
@click.option("-m", "--model", help="provider:model for lines without their own 'model'.")
@click.option(
    "-c",
    "--concurrency",
    type=click.IntRange(min=1),
    default=DEFAULT_CONCURRENCY,
    show_default=True,
    help="Requests in flight.",
)
@click.option("--resume", is_flag=True, help="Continue an interrupted run from its journal (OUTPUT.journal).")
@click.option("--progress/--no-progress", default=None, help="Show a progress bar (default: on a terminal).")
@click.pass_obj
def batch_command(
    client: Client,
    requests_file: Path,
    output: Path,
    model: str | None,
    concurrency: int,
    resume: bool,
    progress: bool | None,
) -> None:
    """Run every request of REQUESTS_FILE (one JSON object per line) and write one result per line.

    Results keep the input order: {"index", "id"?, "ok": true, "response": {...}} or
    {"index", "id"?, "ok": false, "error": {"type", "message", ...}}. Finished
    requests go to OUTPUT.journal as they complete; after an interruption, run
    the same command with --resume to finish without redoing them. The exit
    status is 0 when every request succeeded, 15 when some failed, 16 when all did.
    """
    if not output.parent.is_dir():
        raise LLMConfigurationError(
            f"the output directory {output.parent} does not exist; create it or choose another --output"
        )
    requests, fingerprint = read_requests(requests_file, model)
    journal = Journal.open(output.with_name(output.name + ".journal"), fingerprint, len(requests), resume=resume)
    pending = [i for i, r in enumerate(requests) if r.error is None and i not in journal.done]
    show = sys.stderr.isatty() if progress is None else progress
    started = time.monotonic()
    try:
        with _progress(show, len(requests), len(requests) - len(pending)) as advance:

            def finished(position: int, result: BatchResult) -> None:
                journal.record(pending[position], result_record(result))
                advance()

            asyncio.run(
                abatch([requests[i].arguments for i in pending], concurrency, client=client, on_result=finished)
            )
    except KeyboardInterrupt:
        journal.close()
        click.echo(
            f"interrupted: {len(journal.done)} of {len(requests)} requests finished; "
            "run the same command with --resume to finish",
            err=True,
        )
        sys.exit(BATCH_INTERRUPTED)
    try:
        _write_results(output, requests, journal.done)
    except OSError as exc:
        journal.close()
        raise LLMError(
            f"cannot write the results to {output}: {exc.strerror or exc}; every finished request is kept in "
            f"{journal.path}: fix that and run the same command with --resume"
        ) from None
    journal.remove()
    failed = _summary(requests, journal.done, len(pending), time.monotonic() - started)
    if failed:
        sys.exit(BATCH_ALL_FAILED if failed == len(requests) else BATCH_SOME_FAILED)


def _write_results(output: Path, requests: list[FileRequest], done: dict[int, dict[str, Any]]) -> None:
    temporary = output.with_name(output.name + ".tmp")
    # a lone surrogate (from a model's JSON) can only sit in a JSON string, where "\\udXXX" is its escape
    with temporary.open("w", encoding="utf-8", errors="backslashreplace") as file:
        for index, request in enumerate(requests):
            record = done[index] if request.error is None else {"ok": False, "error": error_record(request.error)}
            head: dict[str, Any] = {"index": index} if request.id is None else {"index": index, "id": request.id}
            file.write(json.dumps({**head, **record}, ensure_ascii=False) + "\n")
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, output)


def _summary(requests: list[FileRequest], done: dict[int, dict[str, Any]], ran: int, seconds: float) -> int:
    """Print the summary line; return how many requests failed."""
    failed = sum(1 for r in requests if r.error is not None) + sum(1 for rec in done.values() if not rec["ok"])
    rate = ran / seconds if seconds > 0 else 0.0
    click.echo(
        f"{len(requests)} requests: {len(requests) - failed} ok, {failed} failed; "
        f"ran {ran} in {seconds:.2f}s ({rate:.1f}/s)",
        err=True,
    )
    return failed


@contextmanager
def _progress(show: bool, total: int, completed: int) -> Iterator[Callable[[], None]]:
    """Give ``advance()``: a rich bar with rate and ETA on stderr, or nothing when not shown."""
    if not show:
        yield lambda: None
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
        task_id = bar.add_task("batch", total=total, completed=completed)
        yield lambda: bar.advance(task_id)
