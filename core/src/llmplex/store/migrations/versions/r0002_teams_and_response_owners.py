"""Teams of virtual keys, the owners of the response ids the gateway hands out, and calls looked up by request id.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``virtual_keys.team``, the ``response_owners`` table and an index on ``calls.request_id``."""
    op.add_column("virtual_keys", sa.Column("team", sa.String(128), nullable=True))
    op.create_table(
        "response_owners",
        sa.Column("response_id", sa.String(255), primary_key=True),
        sa.Column("key_name", sa.String(255), nullable=False),
        sa.Column("team", sa.String(128), nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_calls_request_id", "calls", ["request_id"])


def downgrade() -> None:
    """Drop what ``upgrade`` made."""
    op.drop_index("ix_calls_request_id", "calls")
    op.drop_table("response_owners")
    with op.batch_alter_table("virtual_keys") as batch:
        batch.drop_column("team")
