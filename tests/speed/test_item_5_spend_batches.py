"""Issue 34 item 5: a process killed while its spend rows wait for their batch loses none of them.

A row is on disk (the journal) before its answer ends; the shipper sends rows in batches, waiting for a batch to
fill. A process killed while a batch waits (some of its segment's rows shipped, the rest not, the last line cut)
loses no row: the next start replays the rest, counts none twice, and skips a line the crash cut or garbled.
"""

from __future__ import annotations

import atexit
import fcntl
import os
from pathlib import Path
from typing import Any

from sqlalchemy import select

from llmplex.gateway.spend.journal import SpendJournal
from llmplex.store.database import open_database
from llmplex.store.schema import calls
from tests.speed.gateway_records import numbered_row


def rows(url: str) -> list[dict[str, Any]]:
    engine = open_database(url)
    try:
        with engine.connect() as connection:
            return [dict(item) for item in connection.execute(select(calls)).mappings()]
    finally:
        engine.dispose()


def test_item_5_a_crash_while_a_batch_waits_loses_no_row_and_counts_none_twice(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'spend.db'}"
    folder = tmp_path / "journal"
    before = SpendJournal(url, folder, linger=600.0).start()  # a batch that waits (almost) for ever
    assert all(before.write(numbered_row("batch", number)) for number in range(3))
    assert before.flush(30)  # shipped: a replay must not count them again
    assert all(before.write(numbered_row("batch", number)) for number in range(3, 8))  # answered; their batch waits
    atexit.unregister(before.close)
    with before.shipper._cond:  # killed: its queue is gone, its thread ships nothing more
        before.shipper._pending.clear()
        before.shipper._stop = True
        before.shipper._cond.notify_all()
    segment = before.journal._segment
    assert segment is not None
    os.write(segment.fd, b'{"request_id": "req-cut", "created_at": "2026-')  # killed mid-line
    fcntl.flock(segment.fd, fcntl.LOCK_UN)  # the process is gone: its lock with it
    with (folder / "journal-0-garbled.jsonl").open("wb") as garbled:
        garbled.write(b"\x00\xff not json\n[1, 2]\n")
    after = SpendJournal(url, folder).start()
    try:
        assert after.flush(30)
    finally:
        after.close(10)
    logged = rows(url)
    assert sorted(item["request_id"] for item in logged) == [f"req-batch-{number}" for number in range(8)]
    assert {item["output_tokens"] for item in logged} == set(range(8))
    assert after.shipper.shipped == 5
    os.close(segment.fd)
