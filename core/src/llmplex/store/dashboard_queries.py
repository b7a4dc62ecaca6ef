"""The dashboard's reads of the call log: totals per day/model/provider/key, a page of calls, one conversation.

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

__all__ = ["MAX_PAGE_SIZE", "CallsPage", "call_with_conversation", "calls_page", "log_version", "summary"]

MAX_PAGE_SIZE = 200
"""The most calls one page of ``calls_page`` holds."""

SNIPPET = 240
"""Characters of a prompt or answer a page row carries."""

_PRECISION = Decimal("1e-10")  # the cost_usd column's scale: sums of floats are rounded back to it


def _money(value: Any) -> str | None:
    return None if value is None else f"{Decimal(str(value)).normalize():f}"


def _day(dialect: str) -> Any:
    if dialect == "sqlite":
        return func.substr(calls.c.created_at, 1, 10)
    return func.to_char(calls.c.created_at, "YYYY-MM-DD")


def _add(groups: dict[str, dict[str, Any]], name: str, n: int, errors: int, unpriced: int, figures: Any) -> None:
    cost, input_tokens, output_tokens = figures
    group = groups.setdefault(
        name,
        {"group": name, "calls": 0, "errors": 0, "unpriced": 0, "input_tokens": 0, "output_tokens": 0, "cost": None},
    )
    group["calls"] += n
    group["errors"] += errors
    group["unpriced"] += unpriced
    group["input_tokens"] += input_tokens
    group["output_tokens"] += output_tokens
    if cost is not None:
        group["cost"] = cost + (group["cost"] or 0)


def _finish(groups: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for group in groups.values():
        cost = group.pop("cost")
        rows.append({**group, "cost_usd": None if cost is None else _money(cost.quantize(_PRECISION))})
    return rows


def summary(connection: Connection, where: CallFilter | None = None) -> dict[str, Any]:
    """Totals, and calls/errors/tokens/cost per day, model (``provider:model``), provider and gateway key,
    of the calls matching ``where``: one aggregated query (one pass over the calls), rolled up here.

    Days are in order; models, providers and keys by cost, largest first. ``cost_usd`` sums the
    priced calls (``None`` when none is priced); ``unpriced`` counts answered calls without a price.
    """
    dialect = connection.dialect.name
    day = _day(dialect)
    statement = _where(
        select(
            day,
            calls.c.provider,
            calls.c.model,
            calls.c.key_name,
            func.count(),
            func.sum(case((calls.c.status == "error", 1), else_=0)),
            func.sum(case((calls.c.cost_usd.is_(None) & (calls.c.status == "ok"), 1), else_=0)),
            func.sum(calls.c.cost_usd),
            func.coalesce(func.sum(calls.c.input_tokens), 0),
            func.coalesce(func.sum(calls.c.output_tokens), 0),
        ),
        where or CallFilter(),
        dialect,
    ).group_by(day, calls.c.provider, calls.c.model, calls.c.key_name)
    tables: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in ("all", "day", "model", "provider", "key")}
    for when, provider, model, key, n, errors, unpriced, cost, input_tokens, output_tokens in connection.execute(
        statement
    ):
        figures = (None if cost is None else Decimal(str(cost)), int(input_tokens), int(output_tokens))
        counts = (int(n), int(errors or 0), int(unpriced or 0))
        for table, name in (("all", ""), ("day", str(when)), ("model", f"{provider}:{model}"), ("provider", provider)):
            _add(tables[table], name, *counts, figures)
        if key:
            _add(tables["key"], key, *counts, figures)
    by_cost = {name: sorted(_finish(tables[name]), key=_largest_cost) for name in ("model", "provider", "key")}
    everything = _finish(tables["all"])
    return {
        "totals": {k: v for k, v in everything[0].items() if k != "group"} if everything else None,
        "by_day": sorted(_finish(tables["day"]), key=lambda g: g["group"]),
        **{f"by_{name}": rows for name, rows in by_cost.items()},
    }


def log_version(connection: Connection) -> tuple[int, int]:
    """The newest call's id and the number of calls: it changes whenever a call is added or removed
    (the log never rewrites a call), so a summary read at one version holds until the next."""
    newest, count = connection.execute(select(func.coalesce(func.max(calls.c.id), 0), func.count())).one()
    return int(newest), int(count)


def _largest_cost(group: dict[str, Any]) -> tuple[Decimal, str]:
    return (-Decimal(group["cost_usd"] or 0), group["group"])


@dataclass(frozen=True)
class CallsPage:
    """One page of calls, newest first: ``rows`` are short summaries (``tool_call``: the name of the first
    tool the answer calls); ``total`` counts every match."""

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
        calls.c.answer[("tool_calls", 0, "name")].as_string().label("tool_call"),
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
