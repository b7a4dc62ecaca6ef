"""A virtual key's rate limits, calls in flight and budget, counted in the ``[limits]`` storage.

With ``[limits] storage = "redis://..."`` every worker and replica counts into the
same Redis keys, so a key's caps hold across all of them; with ``memory://`` they
hold in one process. ``admit`` runs before anything is sent and refuses with a
429 (``Retry-After`` set): requests per minute and tokens per minute in moving
windows (the ``limits`` library, as the providers' own limits are kept), calls
in flight in a shared counter, and the budget: each request reserves its worst-case
cost and is refused when what its key spent and holds leaves no room
(``llmplex.gateway.keys.budget``: N racing requests over a budget worth K answers
let at most K + 1 through). Every look at the storage ends within ``STORAGE_TIMEOUT``: a frozen Redis
refuses requests with a 503 rather than holding them. A request that ends while
Redis is frozen sends its settlement (slot, spend) within ``SETTLE_TIMEOUT``, and Redis
applies it when it thaws; it is not sent twice (a timed-out increment may have been applied, so
it is never retried). One that ends while Redis is unreachable leaves its slot
taken until the counter expires (``_SLOT_TTL``).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from llmplex.errors import LLMError
from llmplex.gateway.errors import GatewayError
from llmplex.gateway.keys.budget import BudgetHold, KeyBudgets
from llmplex.gateway.keys.store import KeyRecord
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.storage import LimitsStore, moving_window

__all__ = ["SETTLE_TIMEOUT", "STORAGE_TIMEOUT", "Hold", "KeyLimits"]

STORAGE_TIMEOUT = 2.0
"""Seconds a request waits for the limits storage before it is refused (503)."""
SETTLE_TIMEOUT = 60.0
"""Seconds a request's settlement (run in the background, waited for by no one) may wait for the storage: long
enough for a frozen Redis to thaw even when the settlement has to open a connection first. Only requests let in
before the storage froze settle, so their number is bounded by the requests that were then in flight."""

_SLOT_TTL = 3600  # a process killed mid-request frees its calls-in-flight slots after this many seconds

SpentSince = Callable[[str, datetime], Decimal]
"""What the spend log says key ``name`` spent since a moment (seeds a budget kept in memory)."""


@dataclass
class Hold:
    """What one admitted request holds: a calls-in-flight slot, its estimated tokens, its budget reservation."""

    record: KeyRecord
    slot: bool
    tokens: int
    budget: BudgetHold | None
    settled: bool = False


async def _value(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


class KeyLimits:
    """The caps of every virtual key, kept in ``store``; ``spent_since`` seeds budgets the storage does not share."""

    def __init__(self, store: LimitsStore, spent_since: SpentSince) -> None:
        self.store = store
        self.spent_since = spent_since
        self._tasks: set[asyncio.Task[None]] = set()
        self.budgets = KeyBudgets(self._run, spent_since)

    def __repr__(self) -> str:
        return f"KeyLimits({self.store!r})"

    def warm_up(self) -> None:
        """Import the limiters and connect to the storage now (at startup), not on the first request's clock.

        A storage that cannot be reached is left for the requests to report (503)."""
        import limits.aio.strategies
        import limits.strategies  # noqa: F401

        try:
            self.store.storage()
        except LLMError:
            return

    async def _run(self, operation: Callable[[Any], Awaitable[Any]], timeout: float = STORAGE_TIMEOUT) -> Any:
        try:
            return await self.store.arun(operation, Deadline.after(timeout))
        except LLMError as exc:
            raise GatewayError(
                503, f"the gateway's limits storage did not answer: {exc.message}", kind="limits_storage"
            ) from None

    # -- admission ---------------------------------------------------------------------

    async def admit(self, record: KeyRecord, estimated_tokens: int, worst_case_usd: Decimal | None = None) -> Hold:
        """Take room for one request of ``record``'s key (``worst_case_usd`` on its budget), or raise a 429 (or
        a 503 when the storage fails)."""
        budget = await self.budgets.reserve(record, worst_case_usd)
        try:
            return await self._admit(record, estimated_tokens, budget)
        except BaseException:
            if budget is not None:  # refused (or cancelled) after the reservation: give it back
                self._later(self.budgets.settle(budget, None))
            raise

    async def _admit(self, record: KeyRecord, estimated_tokens: int, budget: BudgetHold | None) -> Hold:
        tokens = max(1, estimated_tokens) if record.tpm else 0
        if record.rpm or record.tpm:
            await self._run(lambda storage: self._take_rates(storage, record, tokens))
        slot = False
        if record.max_parallel:
            key = f"llmplex/key/{record.key_id}/in_flight"
            count = await self._run(lambda storage: _value(storage.incr(key, _SLOT_TTL, amount=1)))
            if count > record.max_parallel:
                await self._run(lambda storage: _value(storage.incr(key, _SLOT_TTL, amount=-1)))
                raise _too_many(
                    f"key {record.name!r} has {record.max_parallel} requests in flight, its max_parallel", 1.0
                )
            slot = True
        return Hold(record, slot, tokens, budget)

    async def _take_rates(self, storage: Any, record: KeyRecord, tokens: int) -> None:
        from limits import RateLimitItemPerMinute

        limiter = moving_window(storage)
        name = record.name
        if record.tpm and tokens > record.tpm:
            raise GatewayError(
                429,
                f"the request needs about {tokens} tokens, more than key {name!r}'s tpm ({record.tpm}) allows "
                "in a minute: shorten it or raise the key's tpm",
                code="rate_limit_exceeded",
                kind="rate_limit",
            )
        token_rate = RateLimitItemPerMinute(record.tpm) if record.tpm else None
        token_ids = ("llmplex", "key", record.key_id, "tokens")
        if token_rate is not None and not await _value(limiter.test(token_rate, *token_ids, cost=tokens)):
            await self._refuse(limiter, token_rate, token_ids, f"key {name!r}'s tpm ({record.tpm})")
        if record.rpm:
            request_rate, request_ids = (
                RateLimitItemPerMinute(record.rpm),
                ("llmplex", "key", record.key_id, "requests"),
            )
            if not await _value(limiter.hit(request_rate, *request_ids)):
                await self._refuse(limiter, request_rate, request_ids, f"key {name!r}'s rpm ({record.rpm})")
        if token_rate is not None and not await _value(limiter.hit(token_rate, *token_ids, cost=tokens)):
            await self._refuse(limiter, token_rate, token_ids, f"key {name!r}'s tpm ({record.tpm})")

    async def _refuse(self, limiter: Any, item: Any, identifiers: tuple[str, ...], what: str) -> None:
        stats = await _value(limiter.get_window_stats(item, *identifiers))
        raise _too_many(f"{what} is used up", max(1.0, stats.reset_time - time.time()))

    # -- the end of a request ------------------------------------------------------------

    def settle(self, hold: Hold, cost_usd: Decimal | None, used_tokens: int | None) -> asyncio.Task[None]:
        """Free ``hold``'s slot, settle its budget reservation to ``cost_usd`` and count its extra tokens, in the
        background (never blocks the loop; once per hold); the task doing it."""
        return self._later(self._settle(hold, cost_usd, used_tokens))

    def _later(self, work: Awaitable[None]) -> asyncio.Task[None]:
        async def run() -> None:
            with contextlib.suppress(GatewayError):  # the storage is down: counters expire; the log has the cost
                await work

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def settled(self) -> None:
        """Wait for the settlements under way (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _settle(self, hold: Hold, cost_usd: Decimal | None, used_tokens: int | None) -> None:
        if hold.settled:
            return
        hold.settled = True
        record = hold.record
        try:
            if hold.slot:
                key = f"llmplex/key/{record.key_id}/in_flight"
                await self._run(lambda storage: _value(storage.incr(key, _SLOT_TTL, amount=-1)), SETTLE_TIMEOUT)
            if hold.budget is not None:
                await self.budgets.settle(hold.budget, cost_usd)
            extra = (used_tokens or 0) - hold.tokens
            if record.tpm and extra > 0:
                from limits import RateLimitItemPerMinute

                item = RateLimitItemPerMinute(record.tpm)
                ids = ("llmplex", "key", record.key_id, "tokens")
                cost = min(extra, record.tpm or 1)
                await self._run(lambda s: _value(moving_window(s).hit(item, *ids, cost=cost)), SETTLE_TIMEOUT)
        except GatewayError:
            pass  # the storage is down: the slot frees itself after _SLOT_TTL; the spend log still has the cost


def _too_many(message: str, retry_after: float) -> GatewayError:
    return GatewayError(
        429, f"{message}; retry later", code="rate_limit_exceeded", retry_after=retry_after, kind="rate_limit"
    )
