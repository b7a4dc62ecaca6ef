"""The call log and the gateway's database, on SQLAlchemy 2 (imported only when it is used).

- ``CallLog``: the observer a ``Client`` attaches (``Client(log=True)``, ``[log] enabled = true``,
  the CLI by default) that records every call into the database;
  ``call_context(conversation_id=..., key_name=...)`` tags the calls made inside it.
- ``CallWriter`` / ``writer_for(url)``: the batched background writer (``submit(row)`` never blocks or raises).
- ``open_database(url)``, ``sync_engine``, ``async_engine``, ``migrate``, ``default_url``: open and
  migrate a database (``sqlite:///PATH``, ``postgresql://...``); Alembic migrations ship in
  ``llmplex/store/migrations``.
- ``calls``, ``virtual_keys``, ``metadata``: the SQLAlchemy Core tables.
- ``recent_calls``, ``cost_totals``, ``conversation_messages``, ``latest_conversation_id``,
  ``load_conversation`` (a logged conversation as ``list[Message]``), ``CallFilter``: queries.

Names load lazily, so that importing ``llmplex.store.recorder`` (what a Client needs) imports no SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llmplex.store.database import async_engine, default_url, migrate, open_database, sync_engine
    from llmplex.store.queries import (
        CallFilter,
        CostRow,
        call_json,
        conversation_messages,
        cost_totals,
        latest_conversation_id,
        load_conversation,
        recent_calls,
    )
    from llmplex.store.recorder import CallLog, call_context
    from llmplex.store.schema import calls, metadata, virtual_keys
    from llmplex.store.writer import CallLogWarning, CallWriter, writer_for

__all__ = [
    "CallFilter",
    "CallLog",
    "CallLogWarning",
    "CallWriter",
    "CostRow",
    "async_engine",
    "call_context",
    "call_json",
    "calls",
    "conversation_messages",
    "cost_totals",
    "default_url",
    "latest_conversation_id",
    "load_conversation",
    "metadata",
    "migrate",
    "open_database",
    "recent_calls",
    "sync_engine",
    "virtual_keys",
    "writer_for",
]

_WHERE = {
    "async_engine": "database",
    "default_url": "database",
    "migrate": "database",
    "open_database": "database",
    "sync_engine": "database",
    "CallFilter": "queries",
    "CostRow": "queries",
    "call_json": "queries",
    "conversation_messages": "queries",
    "cost_totals": "queries",
    "latest_conversation_id": "queries",
    "load_conversation": "queries",
    "recent_calls": "queries",
    "CallLog": "recorder",
    "call_context": "recorder",
    "calls": "schema",
    "metadata": "schema",
    "virtual_keys": "schema",
    "CallLogWarning": "writer",
    "CallWriter": "writer",
    "writer_for": "writer",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'llmplex.store' has no attribute {name!r}")
    return getattr(importlib.import_module(f"llmplex.store.{module}"), name)


def __dir__() -> list[str]:
    return sorted(__all__)
