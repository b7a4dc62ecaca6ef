"""Reading the call log: recent calls with filters and full-text search, cost totals, conversations.

Every function takes a SQLAlchemy ``Engine`` (``llmplex.store.open_database``) or
an open ``Connection``. Full-text search uses SQLite's FTS5 index
(``calls_fts``), every word of the search as written; on PostgreSQL it matches words with ``ILIKE``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal

from sqlalchemy import Connection, Engine, Select, and_, case, func, literal, literal_column, or_, select, text

from llmplex.errors import LLMConfigurationError
from llmplex.store.schema import USAGE_COLUMNS, calls
from llmplex.types import Message

__all__ = [
    "CallFilter",
    "CostRow",
    "call_json",
    "conversation_messages",
    "cost_totals",
    "latest_conversation_id",
    "load_conversation",
    "recent_calls",
]

Grouping = Literal["model", "day", "provider", "key"]


@dataclass(frozen=True)
class CallFilter:
    """Which calls to read; ``None`` fields do not filter. Dates are UTC, ``until`` excluded."""

    query: str | None = None
    model: str | None = None
    provider: str | None = None
    conversation_id: str | None = None
    status: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    key_name: str | None = None


@dataclass(frozen=True)
class CostRow:
    """One group of ``cost_totals``: ``cost_usd`` sums the priced calls; ``unpriced`` counts calls without a price."""

    group: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal | None
    unpriced: int


def _bind(source: Engine | Connection) -> Connection:
    return source.connect() if isinstance(source, Engine) else source


def _naive(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo is not None else moment


def _where(statement: Select[Any], where: CallFilter, dialect: str) -> Select[Any]:
    conditions = []
    for column, value in (
        (calls.c.provider, where.provider),
        (calls.c.conversation_id, where.conversation_id),
        (calls.c.status, where.status),
        (calls.c.key_name, where.key_name),
    ):
        if value is not None:
            conditions.append(column == value)
    if where.model is not None:
        model = where.model
        bare = model.partition(":")[2] if ":" in model else model
        conditions.append(or_(calls.c.model == bare, calls.c.model_asked == model, calls.c.model == model))
    if where.since is not None:
        conditions.append(calls.c.created_at >= _naive(where.since))
    if where.until is not None:
        conditions.append(calls.c.created_at < _naive(where.until))
    if where.query and where.query.split():
        conditions.append(_search(where.query, dialect))
    return statement.where(and_(*conditions)) if conditions else statement


def _search(query: str, dialect: str) -> Any:
    """Calls whose prompt or answer hold every word of ``query`` (each word matched as written, so that
    ``-``, ``"`` or ``AND`` in a search are words, never FTS5 syntax errors)."""
    if dialect == "sqlite":
        phrase = " ".join('"' + word.replace('"', '""') + '"' for word in query.split())
        fts = text("SELECT rowid FROM calls_fts WHERE calls_fts MATCH :q").bindparams(q=phrase)
        return calls.c.id.in_(fts.columns(literal_column("rowid")))
    return and_(
        *(
            or_(calls.c.prompt_text.icontains(w, autoescape=True), calls.c.answer_text.icontains(w, autoescape=True))
            for w in query.split()
        )
    )


def recent_calls(
    source: Engine | Connection, where: CallFilter = CallFilter(), limit: int = 10
) -> list[dict[str, Any]]:
    """The newest ``limit`` calls that match ``where``, newest first, as ``call_json`` objects."""
    if limit < 0:
        raise LLMConfigurationError(f"the number of calls must be 0 or more, got {limit}")
    connection = _bind(source)
    try:
        statement = _where(select(calls), where, connection.dialect.name).order_by(calls.c.id.desc()).limit(limit)
        return [call_json(row) for row in connection.execute(statement).mappings().all()]
    finally:
        if isinstance(source, Engine):
            connection.close()


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.replace(tzinfo=UTC).isoformat().replace("+00:00", "Z")


def call_json(row: Any) -> dict[str, Any]:
    """One call as plain JSON data, fields named as ``Response`` and ``Usage`` name them.

    ``usage.cost_usd`` is a decimal string, or ``None`` when the price is not known
    (never 0 for unknown); ``messages`` are the prompt sent, ``text``/``tool_calls``
    the answer (``None`` when bodies were not logged).
    """
    answer = row["answer"] or {}
    reported = row["input_tokens"] is not None
    usage: dict[str, Any] = {name: row[name] for name in USAGE_COLUMNS}
    usage["reported"] = reported
    usage["cost_usd"] = None if row["cost_usd"] is None else f"{Decimal(row['cost_usd']).normalize():f}"
    usage["cost_note"] = row["cost_note"]
    return {
        "id": row["id"],
        "created_at": _iso(row["created_at"]),
        "conversation_id": row["conversation_id"],
        "model_asked": row["model_asked"],
        "provider": row["provider"],
        "model": row["model"],
        "status": row["status"],
        "error_type": row["error_type"],
        "text": row["answer_text"],
        "tool_calls": answer.get("tool_calls", []) if row["answer"] is not None else None,
        "refusal": answer.get("refusal"),
        "output": answer.get("output"),
        "finish_reason": row["finish_reason"],
        "usage": usage,
        "latency": row["latency"],
        "attempts": row["attempts"],
        "cached": bool(row["cached"]),
        "response_id": row["response_id"],
        "key_name": row["key_name"],
        "messages": row["prompt"],
        "answer": row["answer"],
        "options": row["options"],
    }


def cost_totals(source: Engine | Connection, by: Grouping = "model", where: CallFilter = CallFilter()) -> list[CostRow]:
    """Calls, tokens and dollars per model, day, provider or key, largest cost first."""
    connection = _bind(source)
    try:
        dialect = connection.dialect.name
        group: Any
        if by == "model":
            group = calls.c.provider + literal(":") + calls.c.model
        elif by == "provider":
            group = calls.c.provider
        elif by == "key":
            group = func.coalesce(calls.c.key_name, "")
        elif by == "day":
            group = (
                func.substr(calls.c.created_at, 1, 10)
                if dialect == "sqlite"
                else func.to_char(calls.c.created_at, "YYYY-MM-DD")
            )
        else:
            raise LLMConfigurationError(f"cost totals group by model, day, provider or key, not {by!r}")
        unpriced = func.sum(case((and_(calls.c.cost_usd.is_(None), calls.c.status == "ok"), 1), else_=0))
        statement = _where(
            select(
                group.label("grp"),
                func.count().label("n"),
                func.coalesce(func.sum(calls.c.input_tokens), 0),
                func.coalesce(func.sum(calls.c.output_tokens), 0),
                func.sum(calls.c.cost_usd),
                unpriced,
            ),
            where,
            dialect,
        ).group_by(group)
        rows = [
            CostRow(
                str(g or ""),
                int(n),
                int(i),
                int(o),
                None if c is None else Decimal(str(c)).normalize(),
                int(u or 0),
            )
            for g, n, i, o, c, u in connection.execute(statement).all()
        ]
    finally:
        if isinstance(source, Engine):
            connection.close()
    if by == "day":
        return sorted(rows, key=lambda r: r.group)
    return sorted(rows, key=lambda r: (-(r.cost_usd or 0), r.group))


def latest_conversation_id(source: Engine | Connection) -> str | None:
    """The conversation of the most recent logged call (``None`` when nothing was logged)."""
    connection = _bind(source)
    try:
        statement = select(calls.c.conversation_id).order_by(calls.c.id.desc()).limit(1)
        return connection.execute(statement).scalar()
    finally:
        if isinstance(source, Engine):
            connection.close()


def conversation_messages(source: Engine | Connection, conversation_id: str) -> tuple[list[Message], str | None]:
    """The logged conversation as messages (its last answered call's prompt and answer) and the model it used.

    Media parts were logged by reference: one with a URL comes back as that URL,
    one whose bytes were not kept becomes a line of text describing it. Raises
    ``LLMConfigurationError`` when no answered call of that conversation has its bodies logged.
    """
    connection = _bind(source)
    try:
        statement = (
            select(calls.c.prompt, calls.c.answer, calls.c.provider, calls.c.model)
            .where(calls.c.conversation_id == conversation_id, calls.c.status == "ok")
            .order_by(calls.c.id.desc())
            .limit(1)
        )
        row = connection.execute(statement).first()
    finally:
        if isinstance(source, Engine):
            connection.close()
    if row is None:
        raise LLMConfigurationError(
            f"no answered call of conversation {conversation_id!r} is in the call log; "
            "`llmplex logs` lists the conversations it holds"
        )
    prompt, answer, provider, model = row
    if prompt is None or answer is None:
        raise LLMConfigurationError(
            f"conversation {conversation_id!r} was logged without its messages ([log] bodies = false), "
            "so it cannot be continued"
        )
    messages = [_message(data) for data in [*_as_list(prompt), answer]]
    return messages, f"{provider}:{model}"


def load_conversation(conversation_id: str | None = None, url: str | None = None) -> list[Message]:
    """A logged conversation as the ``Message`` list to send next (the latest one when no id is given).

    ``url`` is the call log's database (default: ``logs.db`` in the user data directory).
    Raises ``LLMConfigurationError`` when there is nothing to load.
    """
    from llmplex.store.database import open_database

    try:
        engine = open_database(url, create=False)
    except FileNotFoundError:
        raise LLMConfigurationError("the call log is empty: there is no conversation to load") from None
    try:
        conversation = conversation_id or latest_conversation_id(engine)
        if conversation is None:
            raise LLMConfigurationError("the call log is empty: there is no conversation to load")
        return conversation_messages(engine, conversation)[0]
    finally:
        engine.dispose()


def _as_list(value: Any) -> Sequence[Any]:
    return json.loads(value) if isinstance(value, str) else list(value)


def _message(data: dict[str, Any]) -> Message:
    fields = {k: v for k, v in data.items() if k not in ("refusal", "output")}
    content = fields.get("content")
    if isinstance(content, list):
        fields["content"] = [_part(piece) for piece in content]
    return Message.model_validate(fields)


def _part(piece: Any) -> Any:
    if not isinstance(piece, dict) or piece.get("type") not in ("image", "document", "audio"):
        return piece
    if piece.get("url"):
        return {"type": piece["type"], "url": piece["url"], "media_type": piece.get("media_type")}
    return (
        f"[{piece['type']} {piece.get('media_type', '')}, {piece.get('size', '?')} bytes, sha256 "
        f"{str(piece.get('sha256', ''))[:16]}: its bytes are not kept in the call log]"
    )
