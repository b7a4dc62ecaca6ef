"""Ships a ``RowJournal``'s rows to the database in batches, each row once, through database outages.

One daemon thread takes up to ``batch_size`` rows at a time (lingering
``linger`` seconds for a batch to fill) and inserts them in one transaction,
skipping rows whose ``request_id`` the database already holds (so the replay
of a segment that was partly shipped before a crash adds only what is
missing). While the database cannot be written, the batch waits and is tried
again (every ``retry`` seconds, at most): the rows stay in the journal and in
memory, nothing is dropped, and ``database_error`` says what is wrong (the
gateway's readiness reports "degraded"). A row the database refuses on its own
(not the database failing) is dropped with a warning so that it cannot hold
back every row after it. The same thread ``fsync``s the journal every
``fsync_interval`` seconds.
"""

from __future__ import annotations

import collections
import logging
import secrets
import threading
import time
from typing import TYPE_CHECKING, Any

from llmplex.masking.values import redact
from llmplex.store.journal import RowJournal, Segment

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

__all__ = ["Shipper"]

log = logging.getLogger("llmplex.store")

_Item = tuple[dict[str, Any], Segment | None]


class Shipper:
    """Sends the rows of ``journal`` to the database at ``url``; ``start`` replays what dead processes left."""

    def __init__(
        self,
        journal: RowJournal,
        url: str,
        *,
        batch_size: int = 500,
        linger: float = 0.05,
        retry: float = 1.0,
    ) -> None:
        self.journal = journal
        self.url = url
        self.batch_size = batch_size
        self.linger = linger
        self.retry = retry
        self.database_error: str | None = None
        self.shipped = 0
        self.replayed = 0
        self.refused = 0
        self._pending: collections.deque[_Item] = collections.deque()
        self._unsure: set[str] = set()  # request ids the database may hold already: replayed, or a failed batch's
        self._cond = threading.Condition()
        self._busy = False
        self._flushing = 0
        self._stop = False
        self._engine: Engine | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"Shipper({redact(self.url)!r}, pending={self.pending})"

    @property
    def pending(self) -> int:
        """Rows waiting to be shipped."""
        return len(self._pending)

    def start(self) -> Shipper:
        """Queue the rows of segments no live process holds (a crash's leftovers), then start shipping."""
        for segment, rows in self.journal.orphans():
            if not rows:
                self.journal.shipped(segment, 0)
            self.replayed += len(rows)
            self._unsure.update(row["request_id"] for row in rows)
            with self._cond:
                self._pending.extend((row, segment) for row in rows)
        self._thread = threading.Thread(target=self._run, name="llmplex-journal-shipper", daemon=True)
        self._thread.start()
        return self

    def submit(self, row: dict[str, Any], segment: Segment | None) -> None:
        """Queue ``row`` (written to ``segment`` of the journal, or to none when the journal failed)."""
        with self._cond:
            self._pending.append((row, segment))
            if len(self._pending) in (1, self.batch_size):
                self._cond.notify_all()

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every queued row is in the database; ``False`` when ``timeout`` passed first."""
        with self._cond:
            self._flushing += 1
            self._cond.notify_all()
            try:
                return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)
            finally:
                self._flushing -= 1

    def close(self, timeout: float | None = 10.0) -> None:
        """Ship what is queued (within ``timeout``), stop the thread, sync and close the journal."""
        self.flush(timeout)
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
        self.journal.close()
        if self._engine is not None:
            self._engine.dispose()

    # -- the thread ------------------------------------------------------------------------

    def _run(self) -> None:
        synced = time.monotonic()
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._pending) or self._stop, self.journal.fsync_interval)
                if self._stop and not self._pending:
                    return
                if self._pending and self.linger > 0 and not self._flushing:
                    self._cond.wait_for(self._batch_ready, self.linger)
                batch = [self._pending.popleft() for _ in range(min(self.batch_size, len(self._pending)))]
                self._busy = bool(batch)
            if time.monotonic() - synced >= self.journal.fsync_interval:
                self.journal.sync()
                synced = time.monotonic()
            if not batch:
                continue
            ok = False
            try:
                ok = self._ship(batch)
            finally:
                with self._cond:
                    if not ok:
                        self._pending.extendleft(reversed(batch))
                    self._busy = False
                    self._cond.notify_all()
            if not ok:
                with self._cond:
                    self._cond.wait_for(lambda: self._stop, self.retry)
                    if self._stop:
                        return

    def _batch_ready(self) -> bool:
        return len(self._pending) >= self.batch_size or self._flushing > 0 or self._stop

    def _ship(self, batch: list[_Item]) -> bool:
        """Insert ``batch``; ``False`` (nothing counted) when the database cannot be written."""
        from llmplex.store.writer import _database_failure

        try:
            if self._engine is None:
                from llmplex.store.database import open_database

                self._engine = open_database(self.url, writer=True, keep_open=True)
            with self._engine.begin() as connection:
                inserted = _insert_new(connection, [row for row, _ in batch], self._unsure)
        except Exception as exc:
            if not _database_failure(exc) and len(batch) > 1:
                return all(self._ship([item]) for item in batch)
            if not _database_failure(exc):
                self.refused += 1
                log.warning("spend row %s refused by the database: %s", batch[0][0].get("request_id"), _why(exc))
                self._count(batch)
                return True
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None
            self.database_error = _why(exc)
            self._unsure.update(row["request_id"] for row, _ in batch)  # its commit may have landed
            return False
        self.database_error = None
        if self._unsure:
            self._unsure.difference_update(row["request_id"] for row, _ in batch)
        self.shipped += inserted
        self._count(batch)
        return True

    def _count(self, batch: list[_Item]) -> None:
        per_segment: dict[int, tuple[Segment, int]] = {}
        for _, segment in batch:
            if segment is not None:
                known = per_segment.get(id(segment))
                per_segment[id(segment)] = (segment, (known[1] if known else 0) + 1)
        for segment, count in per_segment.values():
            self.journal.shipped(segment, count)


def _insert_new(connection: Connection, rows: list[dict[str, Any]], unsure: set[str]) -> int:
    """Insert the rows whose ``request_id`` is not in ``calls`` yet; how many were inserted. Only the ids in
    ``unsure`` are looked up: a row first shipped by this process cannot be there (its id is new, and no batch
    holding it failed after it might have been committed). A row without a conversation id gets a fresh one."""
    from sqlalchemy import insert, select

    from llmplex.store.schema import calls

    unique = {row["request_id"]: row for row in reversed(rows)}
    asked = [request_id for request_id in unique if request_id in unsure]
    present: set[str] = set()
    if asked:
        present = set(connection.execute(select(calls.c.request_id).where(calls.c.request_id.in_(asked))).scalars())
    # a row's conversation id: the second it was shipped (8 hex digits: the index of conversation ids takes a batch
    # in one place, not in as many places as it has rows), then 128 random bits (32 hex digits), drawn once a batch
    second = f"{int(time.time()):08x}"
    fresh = secrets.token_hex(16 * len(unique))
    new = [
        {**row, "conversation_id": row.get("conversation_id") or second + fresh[32 * index : 32 * index + 32]}
        for index, (request_id, row) in enumerate(reversed(unique.items()))
        if request_id not in present
    ]
    if new:
        connection.execute(insert(calls), new)
    return len(new)


def _why(exc: BaseException) -> str:
    text = redact(str(getattr(exc, "orig", None) or exc)).splitlines() or [type(exc).__name__]
    return f"{type(exc).__name__}: {text[0][:200]}"
