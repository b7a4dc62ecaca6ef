"""``llmplex batch``: a JSONL file of requests in, a JSONL file of results out, resumable."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import click

from llmplex.batching.journal import Journal
from llmplex.batching.provider_run import ProviderBatchRun, check_online_resume
from llmplex.batching.ray_run import LOCAL, RayRun
from llmplex.batching.records import error_record, result_record
from llmplex.batching.requests_file import FileRequest, read_requests
from llmplex.batching.run import DEFAULT_CONCURRENCY, BatchResult, abatch
from llmplex.cli.batch_progress import Mode, batch_progress
from llmplex.cli.exit_codes import BATCH_ALL_FAILED, BATCH_INTERRUPTED, BATCH_SOME_FAILED
from llmplex.cli.usage_line import usage_line
from llmplex.client import Client
from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.types import Usage

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
@click.option(
    "--provider-batch", is_flag=True, help="Send the requests through the providers' own Batch APIs (batch prices)."
)
@click.option(
    "--poll-interval",
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds between polls of provider batches (default: 5 s, growing to 60 s).",
)
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value=LOCAL,
    metavar="[ADDRESS]",
    help="Run the requests on a Ray cluster: its head's ADDRESS, or alone for a local instance (llmplex[ray]).",
)
@click.option(
    "--ray-workers",
    type=click.IntRange(min=1),
    help="Worker processes on the Ray cluster (default: one per CPU of the cluster).",
)
@click.pass_obj
def batch_command(
    client: Client,
    requests_file: Path,
    output: Path,
    model: str | None,
    concurrency: int,
    resume: bool,
    progress: bool | None,
    provider_batch: bool,
    poll_interval: float | None,
    ray_address: str | None,
    ray_workers: int | None,
) -> None:
    """Run every request of REQUESTS_FILE (one JSON object per line) and write one result per line.

    Results keep the input order: {"index", "id"?, "ok": true, "response": {...}} or
    {"index", "id"?, "ok": false, "error": {"type", "message", ...}}. Finished
    requests go to OUTPUT.journal as they complete; after an interruption, run
    the same command with --resume to finish without redoing them. With
    --provider-batch the requests go through the providers' Batch APIs and the
    journal keeps the batch ids, so --resume polls the same batches. With --ray
    the requests run on Ray workers and this process keeps the order and the
    journal; --concurrency counts across the whole cluster. The exit
    status is 0 when every request succeeded, 15 when some failed, 16 when all did.
    """
    if poll_interval is not None and not provider_batch:
        raise LLMConfigurationError("--poll-interval applies to provider batches only: add --provider-batch")
    if ray_address is not None and provider_batch:
        raise LLMConfigurationError("--ray and --provider-batch exclude each other: the provider runs a batch itself")
    if ray_workers is not None and ray_address is None:
        raise LLMConfigurationError("--ray-workers applies to Ray runs only: add --ray")
    ray_run = None if ray_address is None else RayRun(client, ray_address, concurrency=concurrency, workers=ray_workers)
    if not output.parent.is_dir():
        raise LLMConfigurationError(
            f"the output directory {output.parent} does not exist; create it or choose another --output"
        )
    requests, fingerprint = read_requests(requests_file, model)
    journal_path = output.with_name(output.name + ".journal")
    fresh = not journal_path.exists()
    if ray_run is not None:
        ray_run.connect()  # before the journal: a cluster that cannot be reached leaves nothing to --resume
    journal = Journal.open(journal_path, fingerprint, len(requests), resume=resume)
    terminal = sys.stderr.isatty() if progress is None else progress
    mode: Mode = "bar" if terminal else "lines" if progress is None else "off"
    started = time.monotonic()
    if provider_batch:
        ran = _provider_batch(client, requests, journal, fresh, mode, poll_interval)
    else:
        ran = _online(client, requests, journal, mode, concurrency, ray_run)
    try:
        _write_results(output, requests, journal.done)
    except OSError as exc:
        journal.close()
        raise LLMError(
            f"cannot write the results to {output}: {exc.strerror or exc}; every finished request is kept in "
            f"{journal.path}: fix that and run the same command with --resume"
        ) from None
    journal.remove()
    failed = _summary(requests, journal.done, ran, time.monotonic() - started)
    if failed:
        sys.exit(BATCH_ALL_FAILED if failed == len(requests) else BATCH_SOME_FAILED)


def _online(
    client: Client, requests: list[FileRequest], journal: Journal, mode: Mode, concurrency: int, ray: RayRun | None
) -> int:
    """Send the unfinished requests one by one, ``concurrency`` at a time (here or on Ray); return how many ran."""
    check_online_resume(journal)
    pending = [i for i, r in enumerate(requests) if r.error is None and i not in journal.done]
    completed = len(requests) - len(pending)
    with _interruptible(journal, len(requests)), batch_progress(mode, len(requests), completed) as shown:

        def arrived(index: int, record: dict[str, Any]) -> None:
            journal.record(index, record)
            shown.advance()

        def finished(position: int, result: BatchResult) -> None:
            arrived(pending[position], result_record(result))

        if ray is not None:
            ray.run([(i, requests[i].arguments) for i in pending], arrived)
        else:
            asyncio.run(
                abatch([requests[i].arguments for i in pending], concurrency, client=client, on_result=finished)
            )
    return len(pending)


def _provider_batch(
    client: Client, requests: list[FileRequest], journal: Journal, fresh: bool, mode: Mode, poll_interval: float | None
) -> int:
    """Send the unfinished requests through the providers' Batch APIs and collect them; return how many ran."""
    try:
        run = ProviderBatchRun(client, journal, {i: r.arguments for i, r in enumerate(requests) if r.error is None})
    except BaseException:
        journal.remove() if fresh else journal.close()  # nothing was sent: a first run can start over as it was
        raise
    ran = len(run.rows) + len(run.failed)
    with _interruptible(journal, len(requests), run), batch_progress(mode, len(requests), len(requests) - ran) as shown:
        try:
            run.run(poll_interval, shown.advance, shown.batch)
        except LLMError as error:
            journal.close()
            if run.pending_batches:
                error.message = error.message.rstrip(". ") + (
                    f". The provider batches {', '.join(run.pending_batches)} are kept: run the same command with "
                    "--resume to go on collecting them (nothing is submitted twice)"
                )
            raise
    return ran


@contextmanager
def _interruptible(journal: Journal, total: int, run: ProviderBatchRun | None = None) -> Iterator[None]:
    """On Ctrl-C: keep the journal, say how to finish, and exit with status 130."""
    try:
        yield
    except KeyboardInterrupt:
        journal.close()
        waiting = run.pending_batches if run is not None else []
        batches = f"; provider batches {', '.join(waiting)} keep running" if waiting else ""
        click.echo(
            f"interrupted: {len(journal.done)} of {total} requests finished{batches}; "
            "run the same command with --resume to finish",
            err=True,
        )
        sys.exit(BATCH_INTERRUPTED)


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
    click.echo(_spent([rec["response"].get("usage") or {} for rec in done.values() if rec["ok"]]), err=True)
    return failed


_TOKEN_COUNTS = tuple(Usage.model_fields)


def _spent(usages: list[dict[str, Any]]) -> str:
    """The tokens and cost of every answer of the batch (from the journal's records), as one line."""
    counts = ({name: n for name in _TOKEN_COUNTS if type(n := u.get(name)) is int} for u in usages)
    total = sum((Usage.model_validate(c) for c in counts), Usage())
    costs = [u.get("cost_usd") for u in usages]
    known = [Decimal(str(c)) for c in costs if c is not None]
    cost = sum(known, Decimal(0)) if known or not usages else None
    return usage_line(total, cost, unpriced=len(costs) - len(known) if known else 0)
