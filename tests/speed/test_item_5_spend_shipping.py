"""Issue 34 item 5: the spend shipper looks up only the request ids the database may already hold.

Every batch asked the database which of its ``request_id`` were in ``calls`` already (about 21 us of the shipper's
88 us a row). Only two kinds of row can be there: rows replayed from a crashed process's journal, and rows of a
batch whose database write failed after its commit might have landed. Those are still looked up, and counted once;
a row this process ships for the first time is inserted without the look-up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.sql import Select

from llmplex.gateway.spend.journal import SpendJournal
from llmplex.store import shipping
from llmplex.store.database import open_database
from llmplex.store.schema import calls
from tests.speed.gateway_records import numbered_row


def logged(url: str) -> list[str]:
    engine = open_database(url)
    try:
        with engine.connect() as connection:
            return sorted(connection.execute(select(calls.c.request_id)).scalars())
    finally:
        engine.dispose()


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[Select[Any]]:
    """Every SELECT the shipper's connections run."""
    seen: list[Select[Any]] = []
    original = Connection.execute

    def spy(self: Connection, statement: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(statement, Select):
            seen.append(statement)
        return original(self, statement, *args, **kwargs)

    monkeypatch.setattr(Connection, "execute", spy)
    return seen


def test_item_5_rows_shipped_for_the_first_time_are_inserted_without_a_look_up(
    tmp_path: Path, lookups: list[Select[Any]]
) -> None:
    url = f"sqlite:///{tmp_path / 'spend.db'}"
    journal = SpendJournal(url, tmp_path / "journal").start()
    try:
        assert all(journal.write(numbered_row("ship", number)) for number in range(6))
        assert journal.flush(30)
    finally:
        journal.close(10)
    assert lookups == []
    assert logged(url) == [f"req-ship-{number}" for number in range(6)]


def test_item_5_a_batch_that_failed_is_looked_up_when_shipped_again_and_counted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lookups: list[Select[Any]]
) -> None:
    url = f"sqlite:///{tmp_path / 'spend.db'}"
    insert_new = shipping._insert_new
    failures = [0]

    def committed_then_lost(connection: Connection, rows: list[dict[str, Any]], unsure: set[str]) -> int:
        inserted = insert_new(connection, rows, unsure)
        if not failures[0]:  # the rows are written, then the database is lost before the commit is acknowledged
            failures[0] += 1
            connection.commit()
            raise OperationalError("COMMIT", {}, Exception("disk I/O error"))
        return inserted

    monkeypatch.setattr(shipping, "_insert_new", committed_then_lost)
    journal = SpendJournal(url, tmp_path / "journal", retry=0.05).start()
    try:
        assert all(journal.write(numbered_row("ship", number)) for number in range(4))
        assert journal.flush(30)
    finally:
        journal.close(10)
    assert failures == [1]
    assert len(lookups) == 1  # the second try asked which of its rows had landed
    assert logged(url) == [f"req-ship-{number}" for number in range(4)]  # none twice
    assert journal.shipper.shipped == 0 and journal.shipper.database_error is None
