"""The gateway's spend rows on their way to the database: journaled locally first, then shipped in batches.

``SpendJournal`` is what the pipeline writes each request's row to, before the
answer's last byte goes out (``llmplex.store.journal``: one ``write`` of a JSON
line, which survives ``kill -9``; fsync every second, so an operating-system
crash loses at most the last second's rows). Its shipper sends the rows to the
database in batches and, at start, replays the segments a killed process left;
rows are inserted once per request id, so a replay never counts one twice.

While the database is down the gateway keeps answering (rows wait in the
journal) and ``problems`` says "degraded". When the journal cannot be written,
``check`` refuses new requests with a 503 (``Retry-After``) before anything is
sent upstream.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
from pathlib import Path
from typing import Any

from llmplex.gateway.errors import GatewayError
from llmplex.store.journal import RowJournal, journal_dir
from llmplex.store.shipping import Shipper

__all__ = ["SpendJournal"]

log = logging.getLogger("llmplex.gateway")

RETRY_AFTER = 5.0
"""Seconds a request refused for an unwritable journal is told to wait."""

EXIT_SHIP_SECONDS = 5.0
"""Seconds the interpreter's exit waits for queued rows to reach the database."""


class SpendJournal:
    """Rows of gateway requests: to the journal in ``directory`` (default: a folder of ``journal_dir()`` named
    after ``url``), then to the database at ``url``."""

    def __init__(self, url: str, directory: Path | None = None, **shipping: Any) -> None:
        # one folder per database: a replay ships a segment only to the database its rows were meant for
        self.journal = RowJournal(directory or journal_dir() / hashlib.sha256(url.encode()).hexdigest()[:16])
        self.shipper = Shipper(self.journal, url, **shipping)

    def __repr__(self) -> str:
        return f"SpendJournal({self.journal!r})"

    def start(self) -> SpendJournal:
        """Replay what killed processes left in the journal and start shipping (and ship what is left, for a
        few seconds, at interpreter exit: what is not shipped then stays in the journal for the next start)."""
        self.shipper.start()
        atexit.register(self.close, EXIT_SHIP_SECONDS)
        return self

    def check(self) -> None:
        """Raise a 503 (``Retry-After``) when no row could be written now: the request must not be sent."""
        if not self.journal.writable():
            raise GatewayError(
                503,
                f"the gateway cannot record requests right now (its journal: {self.journal.error}); retry shortly",
                retry_after=RETRY_AFTER,
                kind="journal",
            )

    def write(self, row: dict[str, Any]) -> bool:
        """Journal ``row`` and queue it for the database; ``False`` when the journal failed (the row is then
        only queued in memory)."""
        known = self.journal.error is not None
        try:
            segment = self.journal.append(row)
        except OSError as exc:
            if not known:  # once per outage, not once per refused request
                log.error("the spend journal cannot be written (%s): rows wait in memory only", exc)
            self.shipper.submit(row, None)
            return False
        self.shipper.submit(row, segment)
        return True

    def problems(self) -> dict[str, str]:
        """What readiness reports: ``journal`` (requests refused) and ``database`` (degraded: rows wait)."""
        found = {}
        if not self.journal.writable():
            found["journal"] = f"the journal cannot be written: {self.journal.error}"
        if self.shipper.database_error is not None:
            found["database"] = f"{self.shipper.pending} row(s) wait in the journal: {self.shipper.database_error}"
        return found

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every row written so far is in the database."""
        return self.shipper.flush(timeout)

    def close(self, timeout: float | None = 10.0) -> None:
        """Ship what is queued, then close the journal."""
        self.shipper.close(timeout)
