"""The tables of the call log and of the gateway, as SQLAlchemy Core ``Table`` objects.

The Alembic migrations in ``llmplex/store/migrations`` create exactly these
(plus, on SQLite, the ``calls_fts`` full-text index over prompts and answers).
Money is ``Numeric``; a cost that is not known is NULL, with ``cost_note`` saying why.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
)

__all__ = ["USAGE_COLUMNS", "calls", "metadata", "response_owners", "virtual_keys"]

metadata = MetaData()

USAGE_COLUMNS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)
"""The token buckets of ``llmplex.Usage``, one column each (NULL when the call gave no usage)."""

calls = Table(
    "calls",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("created_at", DateTime, nullable=False, doc="UTC time the call started (naive, UTC)."),
    Column("request_id", String(64), nullable=True),
    Column("conversation_id", String(64), nullable=True),
    Column("model_asked", String(255), nullable=False, doc="The model as written: alias or provider:model."),
    Column("provider", String(128), nullable=False, doc="The provider instance that answered (or failed last)."),
    Column("model", String(255), nullable=False, doc="The model that answered, without its prefix."),
    Column("status", String(16), nullable=False, doc="ok or error."),
    Column("error_type", String(128), nullable=True, doc="The LLMError class of a failed call."),
    Column("finish_reason", String(32), nullable=True),
    Column("prompt", JSON, nullable=True, doc="The messages sent, media parts as references (NULL: bodies off)."),
    Column("answer", JSON, nullable=True, doc="The answer: text, tool calls, refusal, output (NULL: bodies off)."),
    Column("prompt_text", Text, nullable=True, doc="The last user message's text (searched)."),
    Column("answer_text", Text, nullable=True, doc="The answer's text (searched)."),
    Column("options", JSON, nullable=True, doc="Sampling options, tools, provider options; no secret values."),
    *(Column(name, Integer, nullable=True) for name in USAGE_COLUMNS),
    Column("cost_usd", Numeric(20, 10), nullable=True, doc="NULL when the price is not known."),
    Column("cost_note", Text, nullable=True, doc="Why cost_usd is NULL (or how it was counted)."),
    Column("latency", Float, nullable=True, doc="Seconds from the first attempt to the answer."),
    Column("attempts", Integer, nullable=True),
    Column("cached", Boolean, nullable=False, default=False),
    Column("response_id", String(255), nullable=True),
    Column("key_name", String(255), nullable=True, doc="The gateway's virtual key that made the call."),
    Column("thread_hash", String(64), nullable=True, doc="Links the next turn of a conversation to this call."),
)
Index("ix_calls_created_at", calls.c.created_at)
Index("ix_calls_conversation_id", calls.c.conversation_id)
Index("ix_calls_model", calls.c.model)
Index("ix_calls_provider", calls.c.provider)
Index("ix_calls_key_name", calls.c.key_name)
Index("ix_calls_thread_hash", calls.c.thread_hash)
Index("ix_calls_request_id", calls.c.request_id)

virtual_keys = Table(
    "virtual_keys",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("key_hash", String(64), nullable=False, unique=True, doc="sha256 hex of the key; the key is never kept."),
    Column("created_at", DateTime, nullable=False),
    Column("expires_at", DateTime, nullable=True),
    Column("revoked_at", DateTime, nullable=True),
    Column("budget_usd", Numeric(20, 10), nullable=True),
    Column("budget_period_seconds", Integer, nullable=True),
    Column("rpm", Integer, nullable=True),
    Column("tpm", Integer, nullable=True),
    Column("max_parallel", Integer, nullable=True),
    Column("models", JSON, nullable=False, doc="Model patterns the key may use (fnmatch); empty: any."),
    Column("metadata", JSON, nullable=False),
    Column("team", String(128), nullable=True, doc="Keys of one team may continue each other's provider-side state."),
)

response_owners = Table(
    "response_owners",
    metadata,
    Column("response_id", String(255), primary_key=True, doc="An id naming state kept at a provider."),
    Column("key_name", String(255), nullable=False, doc="The virtual key (or master) the id was handed to."),
    Column("team", String(128), nullable=True, doc="That key's team when it was handed out."),
    Column("created_at", DateTime, nullable=False),
)
