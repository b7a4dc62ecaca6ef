"""A local journal of spend rows: each row is on disk before its answer ends, then shipped to the database.

``RowJournal`` appends every row as one JSON line to a segment file of its own
(``journal-*.jsonl`` in its directory, by default ``gateway-journal`` in the
user data directory), with one ``write`` on an ``O_APPEND`` descriptor: once
``append`` returns, the row is in the operating system's page cache, so a
process killed at any point after that (``kill -9`` included) loses nothing.
The segment is ``fsync``-ed every ``fsync_interval`` seconds (1 by default):
an operating-system crash or a power cut loses at most the rows of that last
interval. ``append`` raises ``OSError`` when the row cannot be written.

A shipping thread (``llmplex.store.shipping``) sends the rows to the database
in batches, each row once: rows whose ``request_id`` the database has already
are skipped, so shipping twice is harmless. While the database is down the rows
wait (in memory and in the segment) and are sent when it is back. A segment
is deleted once it is full and all its rows are in the database. At start,
``replay`` ships the segments that dead processes left (a segment is locked
with ``flock`` while its process lives, so a live one is never taken).
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

__all__ = ["FSYNC_INTERVAL", "RowJournal", "Segment", "decode_row", "encode_row", "journal_dir"]

FSYNC_INTERVAL = 1.0
"""Seconds between ``fsync`` calls: what an operating-system crash can lose at most."""

SEGMENT_ROWS = 20_000
"""Rows per segment file before the next one is started (a shipped, full segment is deleted)."""

_DECIMALS = ("cost_usd",)
_TIMES = ("created_at",)
_names = itertools.count()


def journal_dir() -> Path:
    """The default journal directory: ``gateway-journal`` in llmplex's user data directory."""
    from llmplex.store.database import data_dir

    return data_dir() / "gateway-journal"


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(type(value).__name__)


def encode_row(row: dict[str, Any]) -> bytes:
    """One row as a JSON line (money as a decimal string, times in ISO 8601)."""
    return orjson.dumps(row, default=_default, option=orjson.OPT_NAIVE_UTC) + b"\n"


def decode_row(line: bytes) -> dict[str, Any] | None:
    """The row of one journal line; ``None`` for a line cut short by a crash (or not a row)."""
    try:
        row = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(row, dict) or not row.get("request_id"):
        return None
    for name in _DECIMALS:
        if row.get(name) is not None:
            row[name] = Decimal(row[name])
    for name in _TIMES:
        if isinstance(row.get(name), str):
            row[name] = datetime.fromisoformat(row[name]).replace(tzinfo=None)
    return row


@dataclass(eq=False)
class Segment:
    """One journal file: ``written`` rows appended, ``shipped`` of them in the database."""

    path: Path
    fd: int
    written: int = 0
    shipped: int = 0
    closed: bool = False  # no more rows will be appended

    def done(self) -> bool:
        return self.closed and self.shipped >= self.written


class RowJournal:
    """The journal in ``directory``: ``append`` writes a row, ``orphans`` finds what dead processes left."""

    def __init__(
        self, directory: Path, *, fsync_interval: float = FSYNC_INTERVAL, segment_rows: int = SEGMENT_ROWS
    ) -> None:
        self.directory = Path(directory)
        self.fsync_interval = fsync_interval
        self.segment_rows = segment_rows
        self._lock = threading.Lock()
        self._segment: Segment | None = None
        self._dirty = False
        self._broken_at = 0.0
        self.error: str | None = None

    def __repr__(self) -> str:
        return f"RowJournal({str(self.directory)!r})"

    # -- appending --------------------------------------------------------------------------

    def _open(self) -> Segment:
        self.directory.mkdir(parents=True, exist_ok=True)
        name = f"journal-{time.time_ns()}-{os.getpid()}-{next(_names)}-{uuid.uuid4().hex[:8]}.jsonl"
        path = self.directory / name
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise
        return Segment(path, fd)

    def append(self, row: dict[str, Any]) -> Segment:
        """Write ``row`` to the journal (``OSError`` when it cannot be); the segment that holds it."""
        line = encode_row(row)
        with self._lock:
            segment = self._segment
            try:
                if segment is None or segment.written >= self.segment_rows:
                    if segment is not None:
                        self._retire(segment)
                    segment = self._segment = self._open()
                written = os.write(segment.fd, line)
                if written != len(line):
                    raise OSError(f"short write to the journal ({written} of {len(line)} bytes)")
            except OSError as exc:
                self._broke(exc)
                raise
            segment.written += 1
            self._dirty = True
            self.error = None
        return segment

    def _broke(self, exc: OSError) -> None:
        self.error = f"{type(exc).__name__}: {exc.strerror or exc}"
        self._broken_at = time.monotonic()
        if self._segment is not None:
            self._retire(self._segment)
            self._segment = None

    def _retire(self, segment: Segment) -> None:
        """No more rows go to ``segment``; its descriptor is synced and closed (the file stays until shipped)."""
        segment.closed = True
        with contextlib.suppress(OSError):
            os.fsync(segment.fd)
        with contextlib.suppress(OSError):
            os.close(segment.fd)
        segment.fd = -1

    def writable(self) -> bool:
        """Whether a row can be written now: a segment is open (one is opened here when none is), and the
        last write did not fail; after a failure, a new segment is tried at most once a second."""
        if self._segment is not None and self.error is None:
            return True
        with self._lock:
            if self._segment is not None and self.error is None:
                return True
            if self.error is not None and time.monotonic() - self._broken_at < 1.0:
                return False
            try:
                self._segment = self._open()
            except OSError as exc:
                self._broke(exc)
                return False
            self.error = None
            return True

    def sync(self) -> None:
        """``fsync`` the current segment if rows were written since the last time."""
        with self._lock:
            segment, dirty, self._dirty = self._segment, self._dirty, False
            if segment is None or not dirty:
                return
            try:
                os.fsync(segment.fd)
            except OSError as exc:
                self._broke(exc)

    def shipped(self, segment: Segment, count: int) -> None:
        """``count`` rows of ``segment`` are in the database; a full, shipped segment is deleted."""
        with self._lock:
            segment.shipped += count
            if segment.done():
                segment.path.unlink(missing_ok=True)
                if segment.fd >= 0:  # a replayed segment, locked until now
                    os.close(segment.fd)
                    segment.fd = -1

    def close(self) -> None:
        """Close the current segment (deleted once all its rows are shipped)."""
        with self._lock:
            segment, self._segment = self._segment, None
            if segment is not None:
                self._retire(segment)
                if segment.done():
                    segment.path.unlink(missing_ok=True)

    # -- replay -----------------------------------------------------------------------------

    def orphans(self) -> Iterator[tuple[Segment, list[dict[str, Any]]]]:
        """The segments no live process holds (left by a crash), locked by this one, with their rows."""
        if not self.directory.is_dir():
            return
        for path in sorted(self.directory.glob("journal-*.jsonl")):
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)  # a live process writes it
                continue
            with open(fd, "rb", closefd=False) as file:
                rows = [row for row in map(decode_row, file.read().splitlines()) if row is not None]
            yield Segment(path, fd, written=len(rows), closed=True), rows  # locked until shipped
