"""Issue 34 item 5: SQLite's full-text index of calls holds only the rows that have a prompt or answer text.

0001's trigger indexed every row, the gateway's spend rows too (no bodies, nothing to search): an FTS5 insert for
each, about a fifth of the shipper's cost a row. Migration 0003 indexes, deletes and updates only rows with text and
takes the text-less rows indexed before it out of the index; its downgrade puts them back.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from alembic import command
from sqlalchemy import Connection, Engine, insert, text

from llmplex.store import database
from llmplex.store.schema import calls


def _row(number: int, prompt: str | None = None) -> dict[str, Any]:
    return {
        "created_at": datetime(2026, 12, 4),
        "request_id": f"req-fts-{number}",
        "model_asked": "fast",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "status": "ok",
        "cached": False,
        "prompt_text": prompt,
    }


def _indexed(connection: Connection) -> list[int]:
    return [row[0] for row in connection.execute(text("SELECT id FROM calls_fts_docsize ORDER BY id"))]


def _found(connection: Connection, words: str) -> list[int]:
    query = text("SELECT rowid FROM calls_fts WHERE calls_fts MATCH :q ORDER BY rowid").bindparams(q=words)
    return [row[0] for row in connection.execute(query)]


def _at(engine: Engine, revision: str) -> None:
    with engine.begin() as connection:
        command.upgrade(database._alembic_config(connection), revision)


def test_item_5_rows_without_text_are_not_indexed(tmp_path: Path) -> None:
    engine = database.open_database(f"sqlite:///{tmp_path / 'log.db'}")
    try:
        with engine.begin() as connection:
            connection.execute(insert(calls), [_row(1), _row(2, "hello world"), _row(3), _row(4, "hello again")])
            assert _indexed(connection) == [2, 4]
            assert _found(connection, "hello") == [2, 4]
    finally:
        engine.dispose()


def test_item_5_updates_and_deletes_keep_the_index_to_the_rows_with_text(tmp_path: Path) -> None:
    engine = database.open_database(f"sqlite:///{tmp_path / 'log.db'}")
    try:
        with engine.begin() as connection:
            connection.execute(insert(calls), [_row(1), _row(2, "hello world"), _row(3), _row(4, "hello again")])
            connection.execute(text("UPDATE calls SET prompt_text = 'goodbye' WHERE id = 1"))
            connection.execute(text("UPDATE calls SET prompt_text = NULL WHERE id = 2"))
            connection.execute(text("UPDATE calls SET prompt_text = 'hello there' WHERE id = 4"))
            connection.execute(text("DELETE FROM calls WHERE id IN (3, 4)"))
            assert _indexed(connection) == [1]
            assert _found(connection, "goodbye") == [1]
            assert _found(connection, "hello") == []
            connection.execute(text("INSERT INTO calls_fts(calls_fts, rank) VALUES ('integrity-check', 0)"))
    finally:
        engine.dispose()


def test_item_5_the_migration_takes_text_less_rows_out_and_its_downgrade_puts_them_back(tmp_path: Path) -> None:
    engine = database.sync_engine(f"sqlite:///{tmp_path / 'log.db'}", writer=True)
    try:
        _at(engine, "0002")
        with engine.begin() as connection:
            connection.execute(insert(calls), [_row(1), _row(2, "hello world"), _row(3)])
            assert _indexed(connection) == [1, 2, 3]  # 0001's trigger
        _at(engine, "head")
        with engine.begin() as connection:
            assert _indexed(connection) == [2]
            assert _found(connection, "hello") == [2]
            command.downgrade(database._alembic_config(connection), "0002")
            assert _indexed(connection) == [1, 2, 3]
            connection.execute(text("INSERT INTO calls_fts(calls_fts, rank) VALUES ('integrity-check', 1)"))
    finally:
        engine.dispose()
