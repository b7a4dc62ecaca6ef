"""SQLite's full-text index of calls holds only the rows that have a prompt or answer text.

A row logged without its bodies (the gateway's spend rows, ``[log] bodies = false``) has no text to search,
yet 0001's trigger indexed it: an FTS5 insert for every row, about a quarter of the row's insert. The triggers
now index, delete and update only rows with text, and the text-less rows are taken out of the index.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_TRIGGERS = ("calls_fts_insert", "calls_fts_delete", "calls_fts_update")
_NEW_TEXT = "new.prompt_text IS NOT NULL OR new.answer_text IS NOT NULL"
_OLD_TEXT = "old.prompt_text IS NOT NULL OR old.answer_text IS NOT NULL"
_INSERT = "INSERT INTO calls_fts(rowid, prompt_text, answer_text)"
_DELETE = "INSERT INTO calls_fts(calls_fts, rowid, prompt_text, answer_text)"
_WITH_TEXT = (
    f"CREATE TRIGGER calls_fts_insert AFTER INSERT ON calls WHEN {_NEW_TEXT} BEGIN "
    f"{_INSERT} VALUES (new.id, new.prompt_text, new.answer_text); END",
    f"CREATE TRIGGER calls_fts_delete AFTER DELETE ON calls WHEN {_OLD_TEXT} BEGIN "
    f"{_DELETE} VALUES ('delete', old.id, old.prompt_text, old.answer_text); END",
    "CREATE TRIGGER calls_fts_update AFTER UPDATE ON calls BEGIN "
    f"{_DELETE} SELECT 'delete', old.id, old.prompt_text, old.answer_text WHERE {_OLD_TEXT}; "
    f"{_INSERT} SELECT new.id, new.prompt_text, new.answer_text WHERE {_NEW_TEXT}; END",
)
_EVERY_ROW = (  # 0001's
    f"CREATE TRIGGER calls_fts_insert AFTER INSERT ON calls BEGIN "
    f"{_INSERT} VALUES (new.id, new.prompt_text, new.answer_text); END",
    f"CREATE TRIGGER calls_fts_delete AFTER DELETE ON calls BEGIN "
    f"{_DELETE} VALUES ('delete', old.id, old.prompt_text, old.answer_text); END",
    "CREATE TRIGGER calls_fts_update AFTER UPDATE ON calls BEGIN "
    f"{_DELETE} VALUES ('delete', old.id, old.prompt_text, old.answer_text); "
    f"{_INSERT} VALUES (new.id, new.prompt_text, new.answer_text); END",
)
_TEXTLESS = "FROM calls WHERE prompt_text IS NULL AND answer_text IS NULL"


def _triggers(made: tuple[str, ...]) -> None:
    for name in _TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    for trigger in made:
        op.execute(trigger)


def upgrade() -> None:
    """On SQLite: the triggers index only rows with text; the text-less rows indexed so far are taken out."""
    if op.get_bind().dialect.name != "sqlite":
        return
    _triggers(_WITH_TEXT)
    op.execute(f"{_DELETE} SELECT 'delete', id, NULL, NULL {_TEXTLESS}")


def downgrade() -> None:
    """0001's triggers, and every text-less row in the index again."""
    if op.get_bind().dialect.name != "sqlite":
        return
    _triggers(_EVERY_ROW)
    op.execute(f"{_INSERT} SELECT id, NULL, NULL {_TEXTLESS}")
