"""The dashboard's reads of the call log: overall totals, one page of calls, one call with its conversation.

Each is one aggregated or index-bounded SQL query (``ORDER BY id`` with ``LIMIT``,
full-text search through ``calls_fts``), so that a page answers in milliseconds
on a log of 100,000 calls. Cost figures are decimal strings, ``None`` when unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, case, func, select

from llmplex.errors import LLMConfigurationError
from llmplex.store.queries import CallFilter, _iso, _where, call_json
from llmplex.store.schema import calls

__all__ = ["MAX_PAGE_SIZE", "CallsPage", "call_with_conversation", "calls_page", "totals"]

MAX_PAGE_SIZE = 200
"""The most calls one page of ``calls_page`` holds."""

SNIPPET = 240
"""Characters of a prompt or answer a page row carries."""


def _money(value: Any) -> str | None:
    return None if value is None else f"{Decimal(str(value)).normalize():f}"


def totals(connection: Connection, where: CallFilter | None = None) -> dict[str, Any]:
    """Calls, failed calls, tokens and dollars over every call matching ``where`` (one query).

    ``cost_usd`` sums the priced calls (``None`` when none is priced); ``unpriced``
    counts answered calls whose price is not known.
    """
    statement = _where(
        select(
            func.count(),
            func.sum(case((calls.c.status == "error", 1), else_=0)),
            func.sum(calls.c.cost_usd),
            func.sum(case((calls.c.cost_usd.is_(None) & (calls.c.status == "ok"), 1), else_=0)),
            func.coalesce(func.sum(calls.c.input_tokens), 0),
            func.coalesce(func.sum(calls.c.output_tokens), 0),
        ),
        where or CallFilter(),
        connection.dialect.name,
    )
    count, errors, cost, unpriced, input_tokens, output_tokens = connection.execute(statement).one()
    return {
        "calls": int(count),
        "errors": int(errors or 0),
        "cost_usd": _money(cost),
        "unpriced": int(unpriced or 0),
        "input_tokens": int(input_tokens),
        "output_tokens": int(output_tokens),
    }


@dataclass(frozen=True)
class CallsPage:
    """One page of calls, newest first: ``rows`` are short summaries; ``total`` counts every match."""

    total: int
    page: int
    per_page: int
    rows: list[dict[str, Any]]


def calls_page(connection: Connection, where: CallFilter, page: int = 1, per_page: int = 50) -> CallsPage:
    """Page ``page`` (from 1) of the calls matching ``where``, ``per_page`` (1 to ``MAX_PAGE_SIZE``) a page."""
    if page < 1:
        raise LLMConfigurationError(f"page numbers start at 1, got {page}")
    if not 1 <= per_page <= MAX_PAGE_SIZE:
        raise LLMConfigurationError(f"a page holds 1 to {MAX_PAGE_SIZE} calls, got {per_page}")
    dialect = connection.dialect.name
    total = connection.execute(_where(select(func.count()).select_from(calls), where, dialect)).scalar_one()
    columns = select(
        calls.c.id,
        calls.c.created_at,
        calls.c.conversation_id,
        calls.c.model_asked,
        calls.c.provider,
        calls.c.model,
        calls.c.status,
        calls.c.error_type,
        func.substr(calls.c.prompt_text, 1, SNIPPET).label("prompt"),
        func.substr(calls.c.answer_text, 1, SNIPPET).label("answer"),
        calls.c.input_tokens,
        calls.c.output_tokens,
        calls.c.cost_usd,
        calls.c.latency,
        calls.c.key_name,
    )
    offset = (page - 1) * per_page
    if offset >= total:
        return CallsPage(int(total), page, per_page, [])
    statement = _where(columns, where, dialect).order_by(calls.c.id.desc()).limit(per_page).offset(offset)
    rows = [
        {**dict(row), "created_at": _iso(row["created_at"]), "cost_usd": _money(row["cost_usd"])}
        for row in connection.execute(statement).mappings()
    ]
    return CallsPage(int(total), page, per_page, rows)


def call_with_conversation(connection: Connection, call_id: int) -> dict[str, Any] | None:
    """One call as ``call_json`` gives it, plus ``conversation``: every call of its conversation (id, time,
    model, status), oldest first; ``None`` when there is no such call."""
    row = connection.execute(select(calls).where(calls.c.id == call_id)).mappings().first()
    if row is None:
        return None
    data = call_json(row)
    turns: list[dict[str, Any]] = []
    if row["conversation_id"] is not None:
        statement = (
            select(calls.c.id, calls.c.created_at, calls.c.provider, calls.c.model, calls.c.status)
            .where(calls.c.conversation_id == row["conversation_id"])
            .order_by(calls.c.id)
            .limit(MAX_PAGE_SIZE)
        )
        turns = [{**dict(t), "created_at": _iso(t["created_at"])} for t in connection.execute(statement).mappings()]
    data["conversation"] = turns
    return data
