"""The background writer: rows go into a queue on the call's path and into the database in batches.

A call only appends to a queue (``submit`` never blocks and never raises); one
daemon thread per database takes up to ``batch_size`` rows at a time and inserts
them in one transaction on a connection it keeps open. After the first row of a
batch it lingers up to ``linger`` seconds for more (a flush cuts that short): a
steady trickle of calls costs a few transactions a second, not one per call,
and the thread's share of the process's CPU and interpreter lock stays small.
A database that cannot be written (read-only, full disk, locked past the busy
timeout, not a database at all) is a
``CallLogWarning``, once per kind of failure, and the rows of that batch are
dropped: the call log never makes a call fail. The thread ends when idle and
starts again on the next row; pending rows are written at interpreter exit
(``flush`` with a timeout).
"""

from __future__ import annotations

import atexit
import collections
import os
import threading
import uuid
import warnings
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from llmplex.masking.values import redact

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

__all__ = ["CallLogWarning", "CallWriter", "Row", "writer_for"]

Row = dict[str, Any] | Callable[[], dict[str, Any]]
"""A row of ``calls``, or a function that builds it (called on the writer's thread, off the call's path)."""

MAX_PENDING = 100_000
"""Rows a writer holds before it drops new ones (with a warning) rather than grow without bound."""


class CallLogWarning(UserWarning):
    """The call log could not write (or read) its database; the calls themselves went on."""


class CallWriter:
    """Writes rows of ``calls`` to ``url`` from a background thread, ``batch_size`` per transaction.

    ``idle`` seconds without rows end the thread; ``linger`` seconds is how long a
    batch waits to fill. ``on_written`` (tests, metrics) is called with each
    batch's row count after it commits.
    """

    def __init__(
        self,
        url: str,
        *,
        batch_size: int = 500,
        idle: float = 2.0,
        linger: float = 0.05,
        on_written: Callable[[int], None] | None = None,
    ) -> None:
        self.url = url
        self.batch_size = batch_size
        self.idle = idle
        self.linger = linger
        self.on_written = on_written
        self._pending: collections.deque[Row] = collections.deque()
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None
        self._busy = False
        self._flushing = 0
        self._engine: Engine | None = None
        self._file: tuple[int, int] | None = None  # the SQLite file the kept connection writes (device, inode)
        self._warned: set[str] = set()
        self.written = 0
        self.dropped = 0
        _every_writer.add(self)

    def __repr__(self) -> str:
        return f"CallWriter(url={redact(self.url)!r}, pending={len(self._pending)})"

    def submit(self, row: Row) -> None:
        """Queue ``row``, or a function the writer's thread calls to build it (never blocks, never raises)."""
        with self._lock:
            if len(self._pending) >= MAX_PENDING:
                self.dropped += 1
                self._warn("full", f"more than {MAX_PENDING} calls wait to be written; this call is not logged")
                return
            self._pending.append(row)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="llmplex-call-log", daemon=True)
                self._thread.start()
            if len(self._pending) in (1, self.batch_size):  # the thread waits for a first row or a full batch
                self._lock.notify_all()

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every queued row is written or dropped; ``False`` when ``timeout`` passed first."""
        with self._lock:
            self._flushing += 1
            self._lock.notify_all()
            try:
                return self._lock.wait_for(lambda: not self._pending and not self._busy, timeout)
            finally:
                self._flushing -= 1

    def close(self, timeout: float | None = 10.0) -> None:
        """Flush, then close the database connections."""
        self.flush(timeout)
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            engine.dispose()

    def _forked(self) -> None:
        """In a child process made by ``fork``: no writer thread yet, and the parent's pending rows are the
        parent's to write (the child would write them twice)."""
        self._lock = threading.Condition()
        self._thread = None
        self._busy = False
        self._flushing = 0
        self._pending.clear()
        if self._engine is not None:
            self._engine.dispose(close=False)  # the parent's connections stay the parent's
            self._engine = None

    # -- the thread --------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._lock.wait_for(lambda: bool(self._pending), self.idle):
                    self._thread = None
                    self._lock.notify_all()
                    return
                if self.linger > 0:
                    self._lock.wait_for(lambda: len(self._pending) >= self.batch_size or self._flushing, self.linger)
                batch = [self._pending.popleft() for _ in range(min(self.batch_size, len(self._pending)))]
                self._busy = True
            try:
                self._write(batch)
            finally:
                with self._lock:
                    self._busy = False
                    self._lock.notify_all()

    def _write(self, batch: list[Row]) -> None:
        rows = [row for row in map(self._built, batch) if row is not None]
        if not rows:
            return
        try:
            if self._engine is not None and self._file_replaced():
                self._engine.dispose()  # the kept connection would write into a deleted or replaced file
                self._engine = None
            if self._engine is None:
                from llmplex.store.database import open_database

                self._engine = open_database(self.url, writer=True, keep_open=True)
                self._file = _identity(self.url)
            with self._engine.begin() as connection:
                _insert(connection, rows)
        except Exception as exc:
            if len(rows) > 1 and self._engine is not None and not _database_failure(exc):
                for row in rows:  # one row the database refuses must not take its batch with it
                    self._write([row])
                return
            self.dropped += len(rows)
            self._failed(exc, len(rows))
            return
        self.written += len(rows)
        if self.on_written is not None:
            self.on_written(len(rows))

    def _file_replaced(self) -> bool:
        """Whether the SQLite file was deleted, moved away or replaced since the connection was opened (a
        rotated or removed log): the next batch opens the file now at the path, made and migrated if need be."""
        return self._file is not None and _identity(self.url) != self._file

    def _built(self, item: Row) -> dict[str, Any] | None:
        """The row of ``item``; a row that cannot be built (a value the log cannot hold) is dropped with a warning."""
        if not callable(item):
            return item
        try:
            return item()
        except Exception as exc:
            self.dropped += 1
            self._warn("build" + type(exc).__name__, f"the call log could not record a call: {type(exc).__name__}")
            return None

    def _failed(self, exc: Exception, count: int) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
        text = (redact(str(getattr(exc, "orig", None) or exc)).splitlines() or [type(exc).__name__])[0][:300]
        where = redact(self.url)
        self._warn(
            type(exc).__name__ + text[:40],
            f"the call log could not write {count} call(s) to {where}: {text} (the calls themselves succeeded; "
            "set [log] database to a writable place, or turn the log off with `llmplex logs off`)",
        )

    def _warn(self, kind: str, message: str) -> None:
        if kind in self._warned:
            return
        self._warned.add(kind)
        warnings.warn(message, CallLogWarning, stacklevel=2)


def _identity(url: str) -> tuple[int, int] | None:
    """(device, inode) of the SQLite file of ``url``; ``None`` for another database or no file."""
    from llmplex.store.database import sqlite_path

    path = sqlite_path(url)
    if path is None:
        return None
    try:
        found = os.stat(path)
    except OSError:
        return (-1, -1)  # gone: never equal to the file that was opened
    return found.st_dev, found.st_ino


def _database_failure(exc: Exception) -> bool:
    """Whether ``exc`` is the database failing (locked, full, read-only, unreachable), not one row refused."""
    from sqlalchemy.exc import InterfaceError, OperationalError

    return isinstance(exc, (OperationalError, InterfaceError, OSError))


def _insert(connection: Connection, batch: list[dict[str, Any]]) -> None:
    """Insert ``batch``, giving each row without a conversation the one its earlier turns had (or a new one)."""
    from sqlalchemy import insert, select

    from llmplex.store.schema import calls

    for given in batch:
        row = {k: v for k, v in given.items() if k != "_links"}
        links = given.get("_links")
        if row.get("conversation_id") is None and links:
            row["conversation_id"] = connection.execute(
                select(calls.c.conversation_id)
                .where(calls.c.thread_hash.in_(links), calls.c.conversation_id.is_not(None))
                .order_by(calls.c.id.desc())
                .limit(1)
            ).scalar()
        if row.get("conversation_id") is None:
            row["conversation_id"] = uuid.uuid4().hex
        connection.execute(insert(calls), [row])


_writers: dict[str, CallWriter] = {}
_writers_lock = threading.Lock()
_every_writer: weakref.WeakSet[CallWriter] = weakref.WeakSet()


def _after_fork() -> None:
    global _writers_lock
    _writers_lock = threading.Lock()
    for writer in list(_every_writer):
        writer._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def writer_for(url: str) -> CallWriter:
    """The process's one writer for ``url`` (made on first use)."""
    with _writers_lock:
        writer = _writers.get(url)
        if writer is None:
            writer = _writers[url] = CallWriter(url)
        return writer


EXIT_FLUSH_TIMEOUT = 120.0
"""Seconds the interpreter's exit waits, per database, for pending rows to be written (a busy machine
with many processes opening the database at once needs tens of seconds)."""


@atexit.register
def _flush_all() -> None:
    """At interpreter exit: write what is pending; what cannot be written in time is a warning."""
    for writer in list(_writers.values()):
        if not writer.flush(timeout=EXIT_FLUSH_TIMEOUT):
            left = len(writer._pending)
            writer._warn("exit", f"{left} call(s) were not written to the call log before the program exited")
