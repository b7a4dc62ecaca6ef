"""The calls table (with its SQLite full-text index) and the gateway's virtual keys.

Revision ID: 0001
Revises:
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_USAGE = ("input_tokens", "output_tokens", "total_tokens", "cached_tokens", "cache_write_tokens", "reasoning_tokens")
_FTS_TRIGGERS = (
    "CREATE TRIGGER calls_fts_insert AFTER INSERT ON calls BEGIN "
    "INSERT INTO calls_fts(rowid, prompt_text, answer_text) VALUES (new.id, new.prompt_text, new.answer_text); END",
    "CREATE TRIGGER calls_fts_delete AFTER DELETE ON calls BEGIN "
    "INSERT INTO calls_fts(calls_fts, rowid, prompt_text, answer_text) "
    "VALUES ('delete', old.id, old.prompt_text, old.answer_text); END",
    "CREATE TRIGGER calls_fts_update AFTER UPDATE ON calls BEGIN "
    "INSERT INTO calls_fts(calls_fts, rowid, prompt_text, answer_text) "
    "VALUES ('delete', old.id, old.prompt_text, old.answer_text); "
    "INSERT INTO calls_fts(rowid, prompt_text, answer_text) VALUES (new.id, new.prompt_text, new.answer_text); END",
)


def upgrade() -> None:
    """Create ``calls``, ``virtual_keys`` and, on SQLite, ``calls_fts`` with its triggers."""
    op.create_table(
        "calls",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("request_id", sa.String(64), nullable=True),
        sa.Column("conversation_id", sa.String(64), nullable=True),
        sa.Column("model_asked", sa.String(255), nullable=False),
        sa.Column("provider", sa.String(128), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error_type", sa.String(128), nullable=True),
        sa.Column("finish_reason", sa.String(32), nullable=True),
        sa.Column("prompt", sa.JSON, nullable=True),
        sa.Column("answer", sa.JSON, nullable=True),
        sa.Column("prompt_text", sa.Text, nullable=True),
        sa.Column("answer_text", sa.Text, nullable=True),
        sa.Column("options", sa.JSON, nullable=True),
        *(sa.Column(name, sa.Integer, nullable=True) for name in _USAGE),
        sa.Column("cost_usd", sa.Numeric(20, 10), nullable=True),
        sa.Column("cost_note", sa.Text, nullable=True),
        sa.Column("latency", sa.Float, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=True),
        sa.Column("cached", sa.Boolean, nullable=False),
        sa.Column("response_id", sa.String(255), nullable=True),
        sa.Column("key_name", sa.String(255), nullable=True),
        sa.Column("thread_hash", sa.String(64), nullable=True),
    )
    for column in ("created_at", "conversation_id", "model", "provider", "key_name", "thread_hash"):
        op.create_index(f"ix_calls_{column}", "calls", [column])
    op.create_table(
        "virtual_keys",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(255), nullable=False, unique=True),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=True),
        sa.Column("revoked_at", sa.DateTime, nullable=True),
        sa.Column("budget_usd", sa.Numeric(20, 10), nullable=True),
        sa.Column("budget_period_seconds", sa.Integer, nullable=True),
        sa.Column("rpm", sa.Integer, nullable=True),
        sa.Column("tpm", sa.Integer, nullable=True),
        sa.Column("max_parallel", sa.Integer, nullable=True),
        sa.Column("models", sa.JSON, nullable=False),
        sa.Column("metadata", sa.JSON, nullable=False),
    )
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE VIRTUAL TABLE calls_fts USING fts5(prompt_text, answer_text, content='calls', content_rowid='id')"
        )
        for trigger in _FTS_TRIGGERS:
            op.execute(trigger)


def downgrade() -> None:
    """Drop what ``upgrade`` made."""
    if op.get_bind().dialect.name == "sqlite":
        for name in ("calls_fts_insert", "calls_fts_delete", "calls_fts_update"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS calls_fts")
    op.drop_table("virtual_keys")
    op.drop_table("calls")
