"""Issue 31 item 5: a key's ``spent`` rebuilt from the spend log is counted once.

The first request after the limits storage lost a key's counters (or made them) rebuilds ``spent`` from the
spend log. Requests arriving while it reads the log wait for it: before, they went on, and the log it read
could already hold the rows of their answers, which their own settlement counted too (a budget raced by 64
requests on two replicas saw its spend counted as more than its answers cost when the host was loaded).
"""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from limits.aio.storage import MemoryStorage

from llmplex.gateway.errors import GatewayError
from llmplex.gateway.keys import budget as budget_module
from llmplex.gateway.keys.budget import KeyBudgets
from llmplex.gateway.keys.store import KeyRecord

COST = Decimal("0.00000885")
RECORD = KeyRecord(name="raced", created_at=datetime(2026, 1, 1, tzinfo=UTC), key_id="k1", budget_usd=Decimal(1))


class SpendLog:
    """A spend log whose read (``spent_since``, run in a thread) waits until the test lets it go on (and fails
    once with ``fail``)."""

    def __init__(self, *, fail: Exception | None = None) -> None:
        self.rows: list[Decimal] = []
        self.reading = threading.Event()
        self.go_on = threading.Event()
        self.reads = 0
        self.fail = fail

    def spent_since(self, name: str, since: datetime) -> Decimal:
        self.reads += 1
        self.reading.set()
        assert self.go_on.wait(60), "the test never let the spend log's read go on"
        if self.fail is not None:  # once: the next read finds the database back
            failure, self.fail = self.fail, None
            raise failure
        return sum(self.rows, Decimal(0))


class Storage:
    """``KeyBudgets.run`` over limits' in-memory storage, counting reads of the ``seeded`` marker."""

    def __init__(self) -> None:
        self.storage = MemoryStorage()
        self.marker_reads = 0

    async def run(self, operation: Any) -> Any:
        return await operation(_Counting(self))


class _Counting:
    def __init__(self, owner: Storage) -> None:
        self.owner = owner

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.owner.storage, name)
        if name == "get":

            async def get(key: str) -> Any:
                self.owner.marker_reads += "/seeded/" in key
                return await method(key)

            return get
        return method


async def _until(condition: Any) -> None:
    """Let the loop run until ``condition()`` holds (each turn a loop iteration, at most 60 s of them)."""
    for _ in range(60_000):
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("condition not reached")


async def _spent_nano(storage: Storage) -> int:
    spent_key = KeyBudgets.keys(RECORD)[0]
    return int(await storage.storage.get(spent_key) or 0)


def test_item_5_a_request_admitted_while_spent_is_rebuilt_is_counted_once() -> None:
    async def scenario() -> int:
        log, storage = SpendLog(), Storage()
        budgets = KeyBudgets(storage.run, log.spent_since)
        first = asyncio.create_task(budgets.reserve(RECORD, COST))
        await asyncio.to_thread(log.reading.wait, 60)  # the first request reads the log
        second = asyncio.create_task(budgets.reserve(RECORD, COST))
        await _until(lambda: second.done() or storage.marker_reads >= 2)
        if second.done():  # the old code: admitted at once, answered, its row in the log before the read ends
            hold = second.result()
            assert hold is not None
            await budgets.settle(hold, COST)
            log.rows.append(COST)
        log.go_on.set()
        held_first, held_second = await first, await second
        assert held_first is not None and held_second is not None
        if not log.rows:  # the new code: the second request waited for the rebuild, then answered
            await budgets.settle(held_second, COST)
            log.rows.append(COST)
        assert log.reads == 1
        return await _spent_nano(storage)

    assert asyncio.run(scenario()) == 8_850  # one answer's cost, not two


def test_item_5_a_rebuild_that_fails_is_tried_again_by_a_request_that_waited() -> None:
    async def scenario() -> None:
        log, storage = SpendLog(fail=OSError("the database is down")), Storage()
        log.rows.append(COST)  # spent before the counters were lost
        budgets = KeyBudgets(storage.run, log.spent_since)
        failing = asyncio.create_task(budgets.reserve(RECORD, COST))
        await asyncio.to_thread(log.reading.wait, 60)
        waiting = asyncio.create_task(budgets.reserve(RECORD, COST))
        await _until(lambda: storage.marker_reads >= 2)
        log.go_on.set()
        with pytest.raises(GatewayError, match="database is down"):
            await failing
        assert await waiting is not None
        assert log.reads == 2  # the waiting request rebuilt spent itself
        assert await _spent_nano(storage) == 8_850

    asyncio.run(scenario())


def test_item_5_a_cancelled_rebuild_leaves_the_next_request_to_rebuild() -> None:
    async def scenario() -> None:
        log, storage = SpendLog(), Storage()
        log.rows.append(COST)
        budgets = KeyBudgets(storage.run, log.spent_since)
        cancelled = asyncio.create_task(budgets.reserve(RECORD, COST))
        await asyncio.to_thread(log.reading.wait, 60)
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        log.go_on.set()
        assert await budgets.reserve(RECORD, COST) is not None
        assert log.reads == 2 and await _spent_nano(storage) == 8_850

    asyncio.run(scenario())


def test_item_5_a_rebuild_never_finished_is_taken_as_done_after_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that died while it read the log leaves its marker: the next requests wait ``SEED_WAIT``, once."""
    monkeypatch.setattr(budget_module, "SEED_WAIT", 0.1)

    async def scenario() -> None:
        log, storage = SpendLog(), Storage()
        budgets = KeyBudgets(storage.run, log.spent_since)
        stuck = asyncio.create_task(budgets.reserve(RECORD, COST))
        await asyncio.to_thread(log.reading.wait, 60)
        assert await budgets.reserve(RECORD, COST) is not None  # after 0.1 s
        reads = storage.marker_reads
        assert await budgets.reserve(RECORD, COST) is not None  # at once: the marker says done
        assert storage.marker_reads == reads and log.reads == 1
        log.go_on.set()
        await stuck

    asyncio.run(scenario())


def test_item_5_a_database_down_during_the_rebuild_is_a_503_and_the_next_request_rebuilds() -> None:
    async def scenario() -> None:
        from sqlalchemy.exc import OperationalError

        down = OperationalError("SELECT", {}, ConnectionRefusedError("connection refused"))
        log, storage = SpendLog(fail=down), Storage()
        log.go_on.set()
        budgets = KeyBudgets(storage.run, log.spent_since)
        with pytest.raises(GatewayError) as refused:
            await budgets.reserve(RECORD, COST)
        assert refused.value.status == 503 and "database is down" in str(refused.value)
        assert await budgets.reserve(RECORD, COST) is not None and log.reads == 2

    asyncio.run(scenario())
