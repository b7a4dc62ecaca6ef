"""The gateway's spend and request log: every finished request as a row of ``calls``, written in batches.

``SpendRecorder`` is the gateway's ``Recorder``: before a request's answer ends
it writes the request's row to the local journal (``SpendJournal``: on disk at
once, shipped to the database in batches, replayed after a crash); when the
request is over it gives back what the request held (``KeyLimits.settle``, in
the background: the budget's reservation settles to the real cost).
The row has the key's name, the model asked, the provider and model that
answered, every token bucket, the cost (the same for a streamed answer as for
the whole one: both come from the final ``Usage``), latency, status and error
type, plus the endpoint and HTTP status in ``options``; never a key or secret,
and no prompt or answer unless ``[gateway] log_bodies = true``. ``spend_totals``
and ``spent_since`` read it back (``llmplex spend``, ``GET /admin/spend``,
budgets kept in memory).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from llmplex.gateway.keys.auth import current_hold
from llmplex.gateway.keys.limits import KeyLimits
from llmplex.gateway.records import RequestRecord
from llmplex.gateway.spend.bodies import bodies_of, collected
from llmplex.reliability.budget import Budget

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from llmplex.gateway.spend.journal import SpendJournal
    from llmplex.store.queries import CostRow

__all__ = ["SpendRecorder", "request_row", "spend_json", "spend_totals", "spent_since"]

GROUPINGS = ("key", "model", "day")

_EPOCH = datetime(1970, 1, 1)  # naive UTC, as the rows' created_at

SETTLE_WAIT = 1.0
"""Seconds an answer waits for its settlement before its last byte (then it goes on in the background)."""


def request_row(record: RequestRecord, calls: list[Any] | None = None) -> dict[str, Any]:
    """The ``calls`` row of one finished gateway request: figures, and the bodies of ``calls`` if given."""
    options: dict[str, Any] = {"endpoint": record.endpoint, "http_status": record.status, "stream": record.stream}
    if record.usage_estimated:
        options["usage_estimated"] = True
    error_type = record.error_type
    row: dict[str, Any] = {
        "created_at": _EPOCH + timedelta(0, record.started_at),  # naive UTC, rounded as fromtimestamp rounds
        "request_id": record.request_id,
        "model_asked": record.model_asked[:255],
        "provider": record.provider[:128],
        "model": record.model[:255],
        "status": "ok" if error_type is None and record.status < 400 else "error",
        "error_type": error_type,
        "options": options,
        "cost_usd": record.cost_usd,
        "cost_note": record.cost_note,
        "latency": record.latency,
        "cached": False,
        "key_name": record.key_name[:255] or None,
    }
    usage = record.usage
    if usage is not None:  # USAGE_COLUMNS, read without a getattr each
        row["input_tokens"] = usage.input_tokens
        row["output_tokens"] = usage.output_tokens
        row["total_tokens"] = usage.total_tokens
        row["cached_tokens"] = usage.cached_tokens
        row["cache_write_tokens"] = usage.cache_write_tokens
        row["reasoning_tokens"] = usage.reasoning_tokens
    if calls:
        row.update(bodies_of(calls))
    return row


class SpendRecorder:
    """Journals each request's row through ``writer`` (with its prompt and answer when ``bodies``), then frees
    its hold on its key's caps and settles its cost."""

    def __init__(
        self, writer: SpendJournal, limits: KeyLimits, bodies: bool = False, unpriced: Budget | None = None
    ) -> None:
        self.writer = writer
        self.limits = limits
        self.bodies = bodies
        self.unpriced = unpriced  # the [budget] unpriced_* rates an unknown cost counts at

    def __repr__(self) -> str:
        return f"SpendRecorder({self.writer!r})"

    def _counted_cost(self, record: RequestRecord) -> Decimal | None:
        """What a request counts against its key's budget: its cost, else (unknown) its tokens at the
        ``[budget]`` ``unpriced_*`` rates; a model with no price and no rates was refused before sending."""
        if record.cost_usd is not None or record.usage is None or self.unpriced is None:
            return record.cost_usd
        return self.unpriced.unpriced_cost(record.usage.input_tokens, record.usage.output_tokens)

    def journal(self, record: RequestRecord) -> None:
        """Write the request's row to the journal (before its answer's last byte goes out)."""
        self.writer.write(request_row(record, collected() if self.bodies else None))

    async def settle(self, record: RequestRecord) -> None:
        """Settle the request's hold before its answer's last byte (waiting ``SETTLE_WAIT`` at most): its budget
        reservation becomes its real cost, so the client's next request finds the room it left."""
        task = self._settle(record)
        if task is not None:
            await asyncio.wait({task}, timeout=SETTLE_WAIT)

    def record(self, record: RequestRecord) -> None:
        """Settle the request's hold (in the background) unless that was done already."""
        self._settle(record)

    def _settle(self, record: RequestRecord) -> asyncio.Task[None] | None:
        hold = current_hold()
        if hold is None:
            return None
        if not hold.slot and hold.budget is None and not hold.record.tpm:  # nothing held, nothing to give back
            hold.settled = True
            return None
        usage = record.usage
        used = None if usage is None else (usage.total_tokens or usage.input_tokens + usage.output_tokens)
        return self.limits.settle(hold, self._counted_cost(record), used)


def spend_totals(
    engine: Engine,
    *,
    by: str = "key",
    key: str | None = None,
    model: str | None = None,
    since: datetime | None = None,
) -> list[CostRow]:
    """Requests, tokens and dollars grouped ``by`` key, model or day, for the filters given."""
    from llmplex.errors import LLMConfigurationError
    from llmplex.store.queries import CallFilter, cost_totals

    if by not in GROUPINGS:
        raise LLMConfigurationError(f"spend groups by key, model or day, not {by!r}")
    return cost_totals(engine, by, CallFilter(key_name=key, model=model, since=since))  # type: ignore[arg-type]


def spent_since(engine: Engine, name: str, since: datetime) -> Decimal:
    """The dollars key ``name`` spent since ``since`` (UTC), by the log."""
    rows = spend_totals(engine, by="key", key=name, since=since.replace(tzinfo=UTC))
    return sum((row.cost_usd or Decimal(0) for row in rows), Decimal(0))


def spend_json(rows: list[CostRow], by: str) -> list[dict[str, Any]]:
    """``rows`` as JSON data (dollars as decimal strings, ``null`` when no request was priced)."""
    return [
        {
            by: row.group or None,
            "requests": row.calls,
            "input_tokens": row.input_tokens,
            "output_tokens": row.output_tokens,
            "cost_usd": None if row.cost_usd is None else f"{row.cost_usd:f}",
            "unpriced_requests": row.unpriced,
        }
        for row in rows
    ]
