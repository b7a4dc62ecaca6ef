"""Run a requests file through the providers' own Batch APIs, journaled so any interruption resumes.

Every row is formatted for its provider first (a row that cannot be fails in
place). Rows of one provider instance and model are cut into batches within
the provider's limits; each batch is written to the journal before it is sent
and its id once the provider gives it, so a resumed run polls the same batches
and never sends a request twice. Results are matched to rows by the generated
custom ids (``r`` and the row index), whatever order the provider returns them in.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from llmplex.batching.journal import Journal, Submission
from llmplex.batching.provider_calls import BatchCalls
from llmplex.batching.provider_rows import PreparedRow, custom_id, prepare_row, require_batch_support
from llmplex.batching.records import result_record
from llmplex.batching.run import BatchResult
from llmplex.errors import LLMBadRequestError, LLMConfigurationError, LLMError, LLMServerError
from llmplex.types import BatchLimits, BatchOutcome, BatchStatus

if TYPE_CHECKING:
    from llmplex.client import Client

__all__ = ["FIRST_POLL_INTERVAL", "MAX_POLL_INTERVAL", "ProviderBatchRun", "check_online_resume", "poll_intervals"]

FIRST_POLL_INTERVAL = 5.0
MAX_POLL_INTERVAL = 60.0
_GROWTH = 1.5


def poll_intervals(fixed: float | None) -> Iterator[float]:
    """Seconds between polling rounds: ``fixed``, or 5 s growing by half each round up to 60 s."""
    interval = FIRST_POLL_INTERVAL if fixed is None else fixed
    while True:
        yield interval
        if fixed is None:
            interval = min(MAX_POLL_INTERVAL, interval * _GROWTH)


@dataclass(frozen=True)
class _Observer:
    """What the run reports as it goes: a request finished, or a batch's state as the provider counts it."""

    finished: Callable[[], None]
    status: Callable[[str, BatchStatus], None]


class ProviderBatchRun:
    """One ``llmplex batch --provider-batch`` run over the valid, unfinished rows of a requests file."""

    def __init__(self, client: Client, journal: Journal, arguments: Mapping[int, Mapping[str, object]]) -> None:
        """Format every row of ``arguments`` (row index -> complete() arguments) that the journal has not finished.

        Raises ``LLMConfigurationError`` before anything is sent or journaled when a
        row's provider has no Batch API support in its plugin.
        """
        self.client = client
        self.journal = journal
        self.rows: dict[int, PreparedRow] = {}
        self.failed: dict[int, LLMError] = {}
        self._calls: dict[tuple[str, str], BatchCalls] = {}
        for index, item in arguments.items():
            if index in journal.done:
                continue
            try:
                self.rows[index] = prepare_row(client, index, item)
            except LLMError as error:
                self.failed[index] = error
        for row in self.rows.values():
            require_batch_support(row.route)
        for submission in journal.submissions.values():
            _check_provider(submission, [self.rows[i] for i in submission.rows.values() if i in self.rows])
        self._in_flight = {i for s in journal.submissions.values() for i in s.rows.values()}

    def calls(self, row: PreparedRow) -> BatchCalls:
        """The batch hooks of ``row``'s provider instance (its errors name the row's model)."""
        if row.group not in self._calls:
            self._calls[row.group] = BatchCalls(self.client, row.route)
        return self._calls[row.group]

    @property
    def pending_batches(self) -> list[str]:
        """Ids of submitted batches with rows still unfinished."""
        return [s.batch_id for s in self._open() if s.batch_id is not None]

    def run(
        self, poll_interval: float | None, finished: Callable[[], None], status: Callable[[str, BatchStatus], None]
    ) -> None:
        """Submit what is not submitted yet, then poll every batch until each one's results are in the journal."""
        observer = _Observer(finished, status)
        for index, error in sorted(self.failed.items()):
            self._record(index, error, observer)
        for submission in self._open():
            if submission.batch_id is None:  # the run that wrote it was interrupted while submitting
                self._send(submission, observer, maybe_sent=True)
        for group in self._groups():
            for chunk in self._chunks(group, observer):
                rows = {custom_id(row.index): row.index for row in chunk}
                self._send(self.journal.submitting(_label(), chunk[0].route.provider.name, rows), observer)
        self._poll(poll_interval, observer)

    # -- submitting ----------------------------------------------------------------

    def _open(self) -> list[Submission]:
        """Submissions with a row this run still has to finish."""
        done, rows = self.journal.done, self.rows
        return [
            s for s in self.journal.submissions.values() if any(i in rows and i not in done for i in s.rows.values())
        ]

    def _groups(self) -> list[list[PreparedRow]]:
        groups: dict[tuple[str, str], list[PreparedRow]] = {}
        for index in sorted(self.rows):
            if index not in self._in_flight:
                row = self.rows[index]
                groups.setdefault(row.group, []).append(row)
        return list(groups.values())

    def _chunks(self, rows: list[PreparedRow], observer: _Observer) -> Iterator[list[PreparedRow]]:
        """``rows`` cut into batches within the provider's limits; a row larger than a whole batch fails."""
        limits = self.calls(rows[0]).limits()
        if limits is None:
            yield rows
            return
        chunk: list[PreparedRow] = []
        size = 0
        for row in rows:
            row_size = row.size(limits.overhead)
            if row_size > limits.max_bytes:
                self._record(row.index, _too_large(row, row_size, limits), observer)
                continue
            if chunk and (len(chunk) >= limits.max_requests or size + row_size > limits.max_bytes):
                yield chunk
                chunk, size = [], 0
            chunk.append(row)
            size += row_size
        if chunk:
            yield chunk

    def _send(self, submission: Submission, observer: _Observer, *, maybe_sent: bool = False) -> None:
        rows = [self.rows[i] for i in submission.rows.values() if i in self.rows and i not in self.journal.done]
        if not rows:
            return
        requests = [row.batch_request() for row in rows]
        try:
            batch_id = self.calls(rows[0]).submit(requests, submission.label, maybe_sent=maybe_sent)
        except LLMError as error:
            self._fail_or_stop(error, rows, observer)  # the provider refused this batch: its rows fail
            return
        self.journal.submitted(submission, batch_id)

    def _fail_or_stop(self, error: LLMError, rows: list[PreparedRow], observer: _Observer) -> None:
        """Fail ``rows`` in place with a permanent ``error``; raise a passing one, or one a user must fix."""
        if error.retryable or isinstance(error, LLMConfigurationError):
            raise error  # the run stops; --resume goes on with the same batches
        for row in rows:
            if row.index not in self.journal.done:
                self._record(row.index, error, observer)

    # -- polling -------------------------------------------------------------------

    def _poll(self, poll_interval: float | None, observer: _Observer) -> None:
        waits = poll_intervals(poll_interval)
        while True:
            for submission in self._open():
                rows = [self.rows[i] for i in submission.rows.values() if i in self.rows]
                if submission.batch_id is None or not rows:
                    continue
                try:
                    self._check(submission, submission.batch_id, rows, observer)
                except LLMError as error:  # this batch cannot be read (an unknown id, results gone): its rows fail
                    self._fail_or_stop(_undecodable(error, submission.batch_id), rows, observer)
            if not self._open():
                return
            self.client.clock.sleep(next(waits))

    def _check(self, submission: Submission, batch_id: str, rows: list[PreparedRow], observer: _Observer) -> None:
        """Poll one batch; once it is done, collect its results."""
        state = self.calls(rows[0]).poll(batch_id)
        observer.status(batch_id, state)
        if state.done:
            self._collect(submission, batch_id, state, observer)

    def _collect(self, submission: Submission, batch_id: str, state: BatchStatus, observer: _Observer) -> None:
        """Journal the result of every row of a finished batch, in place of its row; a missing one as an error."""

        seen: dict[str, int] = {}  # results per custom id in this read of the results

        def take(outcome: BatchOutcome) -> None:
            index = submission.rows.get(outcome.custom_id) if isinstance(outcome, BatchOutcome) else None
            if index is None or index not in self.rows:
                return  # not ours
            seen[outcome.custom_id] = count = seen.get(outcome.custom_id, 0) + 1
            if count == 2:  # two results for one request: neither is trusted
                self._record(index, _twice(self.rows[index], outcome.custom_id, batch_id), observer)
            elif count == 1 and index not in self.journal.done:  # else recorded by an earlier read
                self._record(index, self.rows[index].result(outcome, batch_id), observer)

        rows = [self.rows[i] for i in submission.rows.values() if i in self.rows]
        self.calls(rows[0]).results(batch_id, take, seen.clear)
        for row in rows:
            if row.index not in self.journal.done:
                self._record(row.index, _missing(row, batch_id, state), observer)

    def _record(self, index: int, result: BatchResult, observer: _Observer) -> None:
        self.journal.record(index, result_record(result))
        observer.finished()


def _check_provider(submission: Submission, rows: list[PreparedRow]) -> None:
    """Refuse to poll a batch through another provider instance than the one it was submitted to."""
    moved = sorted({row.route.provider.name for row in rows} - {submission.provider})
    if moved:
        raise LLMConfigurationError(
            f"batch {submission.batch_id or submission.label} was submitted to provider {submission.provider!r}, "
            f"but its requests now go to {', '.join(map(repr, moved))}: resume with the config and --model "
            "of the interrupted run"
        )


def _label() -> str:
    return f"llmplex-{secrets.token_hex(8)}"


def _too_large(row: PreparedRow, size: int, limits: BatchLimits) -> LLMError:
    return LLMBadRequestError(
        f"the request is about {size} bytes, more than one batch of provider {row.route.provider.name!r} may hold "
        f"({limits.max_bytes} bytes); shorten it, or run it without --provider-batch",
        provider=row.route.provider.name,
        model=row.route.model,
    )


def _twice(row: PreparedRow, custom_id: str, batch_id: str) -> LLMError:
    provider, model = row.group
    return LLMServerError(
        f"batch {batch_id} returned more than one result for this request (custom id {custom_id}); which one is "
        "right is unknown, so none is used: send it again",
        provider=provider,
        model=model,
    )


def _undecodable(error: LLMError, batch_id: str) -> LLMError:
    """A download that fails at the same undecodable line every time is no outage: the rows it did not reach
    fail in place (a later ``--resume`` finishes) instead of stopping every run there."""
    cause = error.cause or error.__cause__
    if not isinstance(cause, ValueError):  # JSONDecodeError, a validation error, a bad UTF-8 line
        return error
    failed = LLMServerError(
        f"the results of batch {batch_id} could not be decoded past a broken line ({error.message}); the requests "
        "whose results were not read before it have none: send them again",
        provider=error.provider,
        model=error.model,
        cause=error,
    )
    failed.retryable = False  # reading the same results again fails the same way
    return failed


def _missing(row: PreparedRow, batch_id: str, state: BatchStatus) -> LLMError:
    provider, model = row.group
    if state.error:
        message = f"the provider rejected batch {batch_id}: {state.error}"
        return LLMBadRequestError(message, provider=provider, model=model)
    return LLMServerError(
        f"batch {batch_id} ended ({state.status}) without a result for this request; send it again",
        provider=provider,
        model=model,
    )


def check_online_resume(journal: Journal) -> None:
    """Refuse to run online a journal whose provider batches are still to be collected."""
    submissions = journal.submissions.values()
    ids = [s.batch_id or s.label for s in submissions if any(i not in journal.done for i in s.rows.values())]
    if ids:
        raise LLMConfigurationError(
            f"journal {journal.path} has provider batches still to collect ({', '.join(ids[:5])}"
            f"{', ...' if len(ids) > 5 else ''}): resume with --provider-batch, or their requests would be sent twice"
        )
