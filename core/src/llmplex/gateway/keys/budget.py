"""A key's budget held before a request is sent: the worst case is reserved, then settled to the real cost.

Admission reserves the request's worst-case cost in the ``[limits]`` storage
(one atomic increment of the key's ``held`` counter, shared by every replica),
then reads what the key has spent. The request is let in when what was spent
and held by the requests in flight *before it* is still under the budget;
otherwise its reservation is given back and it gets a 429. When it ends, its
real cost is added to ``spent`` and then its reservation is taken off ``held``
(in that order, so that nobody ever sees neither). A request that fails or is
cancelled before it cost anything gives its reservation back.

Since each admitted request saw every earlier one counted at least at its real
cost (held at its worst case, or spent), N racing requests over a budget worth
K answers let at most K + 1 through, on any number of replicas.

The counters are ``llmplex/key/{key_id}/spent/{window}`` and ``.../held/{window}``
(nano-dollars). When the storage loses them (a Redis restarted without its
data, a ``memory://`` storage in a new process), the first request that finds
the key's ``seeded`` marker gone rebuilds ``spent`` from the spend log, and the
requests that arrive meanwhile wait for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from llmplex.gateway.errors import GatewayError
from llmplex.gateway.keys.store import KeyRecord, database_down

__all__ = ["SEED_WAIT", "BudgetHold", "KeyBudgets", "reserved_nano"]

_NANO = Decimal(10) ** 9
_LIFETIME_TTL = 10 * 365 * 86400
_READY = 1 << 40
"""Added to a key's ``seeded`` marker once ``spent`` is rebuilt (a count of requests stays far below it)."""
_SEED_POLL = 0.02

SEED_WAIT = 10.0
"""Seconds a request waits for another one's rebuild of ``spent`` before it takes it as done."""

Run = Callable[[Callable[[Any], Awaitable[Any]]], Awaitable[Any]]
"""Runs one operation on the limits storage within its timeout (a 503 when it does not answer)."""

SpentSince = Callable[[str, datetime], Decimal]

reserved_nano: contextvars.ContextVar[int | None] = contextvars.ContextVar("llmplex_budget_reserved", default=None)
"""What the request being admitted reserved on its key's budget (nano-dollars; ``None``: no budget)."""


async def _value(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


@dataclass
class BudgetHold:
    """One request's reservation on its key's budget; ``nano`` is what it holds (nano-dollars)."""

    record: KeyRecord
    spent_key: str
    held_key: str
    ttl: int
    nano: int
    settled: bool = False


class KeyBudgets:
    """Reserves and settles the budgets of virtual keys through ``run`` (the limits storage)."""

    def __init__(self, run: Run, spent_since: SpentSince) -> None:
        self.run = run
        self.spent_since = spent_since

    def __repr__(self) -> str:
        return "KeyBudgets()"

    @staticmethod
    def keys(record: KeyRecord) -> tuple[str, str, str, int, datetime]:
        """The key's ``spent``, ``held`` and ``seeded`` counters of its current window, their TTL and its start."""
        start = record.window_start()
        window = int(start.replace(tzinfo=UTC).timestamp())
        base = f"llmplex/key/{record.key_id}"
        period = record.budget_period_seconds
        ttl = period + 86400 if period else _LIFETIME_TTL
        return f"{base}/spent/{window}", f"{base}/held/{window}", f"{base}/seeded/{window}", ttl, start

    async def _incr(self, key: str, ttl: int, amount: int) -> int:
        return int(await self.run(lambda storage: _value(storage.incr(key, ttl, amount=amount))))

    async def _get(self, key: str) -> int:
        return int(await self.run(lambda storage: _value(storage.get(key))) or 0)

    async def _rebuild(self, record: KeyRecord, spent_key: str, seeded_key: str, ttl: int, start: datetime) -> None:
        """The first request after the counters were lost (or made) counts the spend log into ``spent``.

        Requests arriving meanwhile wait for it: the log it reads may already hold rows of their answers, which
        their own settlement counts too. A rebuild that fails or is cancelled clears the marker for the next
        request; one not done within ``SEED_WAIT`` (its process died) is taken as done."""
        waited = 0.0
        while True:
            mark = await self._incr(seeded_key, ttl, 1)
            if mark >= _READY:
                return
            if mark == 1:
                await self._seed(record, spent_key, seeded_key, ttl, start)
                return
            while 1 < mark < _READY:  # another request rebuilds: wait for it
                if waited >= SEED_WAIT:
                    await self._incr(seeded_key, ttl, _READY)
                    return
                await asyncio.sleep(_SEED_POLL)
                waited += _SEED_POLL
                mark = await self._get(seeded_key)
            if mark >= _READY:
                return
            # cleared: the rebuild failed; this request may be the one to try again

    async def _seed(self, record: KeyRecord, spent_key: str, seeded_key: str, ttl: int, start: datetime) -> None:
        try:
            spent = await asyncio.to_thread(self.spent_since, record.name, start)
            if spent > 0:
                await self._incr(spent_key, ttl, math.ceil(spent * _NANO))
        except BaseException as exc:
            with contextlib.suppress(Exception):  # the next request tries again
                await self.run(lambda storage: _value(storage.clear(seeded_key)))
            if not isinstance(exc, Exception) or not database_down(exc):
                raise
            raise GatewayError(
                503,
                f"key {record.name!r}'s spend cannot be read from the spend log while the database is down; "
                "retry shortly",
                retry_after=5,
                kind="database",
            ) from None
        await self._incr(seeded_key, ttl, _READY)

    async def reserve(self, record: KeyRecord, worst_case_usd: Decimal | None) -> BudgetHold | None:
        """Hold ``worst_case_usd`` on ``record``'s budget, or raise a 429 when spent and held leave no room."""
        reserved_nano.set(None)
        if record.budget_usd is None:
            return None
        spent_key, held_key, seeded_key, ttl, start = self.keys(record)
        await self._rebuild(record, spent_key, seeded_key, ttl, start)
        nano = max(0, math.ceil((worst_case_usd or Decimal(0)) * _NANO))
        held = await self._incr(held_key, ttl, nano) - nano  # what others held before this request
        spent = await self._get(spent_key)
        if spent + max(0, held) >= record.budget_usd * _NANO:
            if nano:
                await self._incr(held_key, ttl, -nano)
            raise _spent(record, spent, max(0, held), start)
        reserved_nano.set(nano)
        return BudgetHold(record, spent_key, held_key, ttl, nano)

    async def settle(self, hold: BudgetHold, cost_usd: Decimal | None) -> None:
        """Count ``cost_usd`` as spent, then give the reservation back (once; ``None``: nothing was spent)."""
        if hold.settled:
            return
        hold.settled = True
        if cost_usd:
            await self._incr(hold.spent_key, hold.ttl, math.ceil(cost_usd * _NANO))
        if hold.nano:
            await self._incr(hold.held_key, hold.ttl, -hold.nano)

    async def status(self, record: KeyRecord) -> dict[str, Any]:
        """What ``record``'s key spent and holds in its current window, as the storage counts them."""
        spent_key, held_key, _, _, start = self.keys(record)
        spent, held = await self._get(spent_key), await self._get(held_key)
        return {
            "budget_usd": None if record.budget_usd is None else str(record.budget_usd),
            "window_start": start.replace(tzinfo=UTC).isoformat(),
            "spent_usd": f"{Decimal(spent) / _NANO:f}",
            "held_usd": f"{Decimal(max(0, held)) / _NANO:f}",
        }


def _spent(record: KeyRecord, spent: int, held: int, start: datetime) -> GatewayError:
    period = record.budget_period_seconds
    retry: float | None = None
    if held:  # requests in flight may give room back when they end
        retry = 1.0
    elif period:
        retry = max(1.0, start.replace(tzinfo=UTC).timestamp() + period - time.time())
    held_text = f" and ${Decimal(held) / _NANO:.6f} held by requests in flight" if held else ""
    return GatewayError(
        429,
        f"the budget of key {record.name!r} is spent: ${Decimal(spent) / _NANO:.6f}{held_text} of "
        f"${record.budget_usd} {'this period' if period else 'in all'}; raise it with "
        f"`llmplex keys update {record.name} --budget-usd X`",
        code="budget_exceeded",
        retry_after=retry,
        kind="budget",
    )
