"""Item 7 (added latency): the spend/call log's writer keeps its work off the request path.

Measured with ``bench/gateway.py``: when the writer opened, set up and closed a SQLite connection and
committed once per request, its thread took the interpreter lock and the gateway's CPU for about 3 ms of
every request at 1 in flight. These tests hold the two fixes: a steady trickle of rows is written in
batches (it waits ``linger`` seconds for more, unless a flush asks for the rows now), on one connection
the writer keeps open.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from sqlalchemy import event

from llmplex.store import CallWriter
from tests.calllog.support import all_rows, sqlite_url


def _row(n: int) -> dict[str, Any]:
    from datetime import UTC, datetime

    return {
        "created_at": datetime.now(UTC).replace(tzinfo=None),
        "model_asked": "mock:m",
        "provider": "mock",
        "model": "m",
        "status": "ok",
        "prompt_text": f"prompt {n}",
        "input_tokens": 1,
        "output_tokens": 1,
        "total_tokens": 2,
        "latency": 0.001,
        "attempts": 1,
        "cached": False,
    }


def test_item_7_a_trickle_of_rows_is_one_transaction_not_one_per_row(tmp_path: Path) -> None:
    batches: list[int] = []
    full = threading.Event()

    def written(count: int) -> None:
        batches.append(count)
        if sum(batches) >= 5:
            full.set()

    writer = CallWriter(sqlite_url(tmp_path), batch_size=5, linger=60.0, on_written=written)
    for n in range(5):
        writer.submit(_row(n))
    assert full.wait(30), "a full batch was not written without a flush"
    assert batches == [5]
    writer.close()
    assert len(all_rows(sqlite_url(tmp_path))) == 5


def test_item_7_a_flush_does_not_wait_for_the_linger(tmp_path: Path) -> None:
    writer = CallWriter(sqlite_url(tmp_path), linger=600.0)
    for n in range(3):
        writer.submit(_row(n))
    assert writer.flush(timeout=60), "flush waited for the 600 s linger instead of cutting it short"
    assert writer.written == 3
    writer.submit(_row(3))  # a flush that ended leaves the linger in force again, and a second flush cuts it too
    assert writer.flush(timeout=60)
    assert writer.written == 4
    writer.close()


def test_item_7_the_writer_keeps_one_connection_across_batches(tmp_path: Path) -> None:
    writer = CallWriter(sqlite_url(tmp_path), linger=0.0)
    writer.submit(_row(0))
    assert writer.flush(timeout=60)
    engine = writer._engine
    assert engine is not None
    opened: list[object] = []
    event.listen(engine, "connect", lambda connection, record: opened.append(connection))
    for n in range(1, 6):
        writer.submit(_row(n))
        assert writer.flush(timeout=60)
    assert writer.written == 6
    assert opened == [], f"{len(opened)} new connections for 5 batches: each batch opened (and closed) its own"
    writer.close()
