"""A budget kept in the ``[limits]`` storage, so that every process and host using it shares the caps."""

from __future__ import annotations

import atexit
import logging
import math
import threading
from concurrent.futures import Future
from concurrent.futures import wait as wait_for_futures
from decimal import Decimal

from llmplex.config.schema import LimitsConfig
from llmplex.reliability import workers
from llmplex.reliability.budget import (
    Budget,
    BudgetSnapshot,
    BudgetTracker,
    Charge,
    Reservation,
    cap_reached,
    charge,
    exhausted,
    fits,
)
from llmplex.reliability.estimate import Estimate, Estimator, estimate_input_tokens
from llmplex.reliability.storage import LimitsStore, store_for
from llmplex.types import Usage

__all__ = ["BUDGET_TTL", "POLL_INTERVAL", "SharedBudgetTracker"]

BUDGET_TTL = 30 * 24 * 3600
"""Seconds a shared budget's counters live in the storage after they are first written: use a new name
to start a budget again sooner."""

POLL_INTERVAL = 0.05
"""Seconds between looks at the storage while a request waits for other processes to free budget room."""

_SPENT = ("input", "output", "total", "requests", "cost_nano_usd")
_HELD = ("held_input", "held_output", "held_total")
_NANO = Decimal(10) ** 9
"""Dollars are counted in whole nano-dollars (the storage's counters are integers), rounded up."""

logger = logging.getLogger("llmplex")

_writing: set[Future[None]] = set()  # settlements this process is still writing to the storage
_writing_lock = threading.Lock()


def _nano(dollars: Decimal | None) -> int:
    return math.ceil((dollars or 0) * _NANO)


def _snapshot(input_tokens: int, output: int, total: int, requests: int, cost_nano_usd: int) -> BudgetSnapshot:
    return BudgetSnapshot(input_tokens, output, total, requests, Decimal(cost_nano_usd) / _NANO)


class SharedBudgetTracker(BudgetTracker):
    """A ``BudgetTracker`` whose counts live in a ``limits`` storage.

    Every tracker with the same ``name`` on the same storage (``"redis://host:port/db"``)
    counts into the same budget, in any process or host; admission follows the
    same rules as the in-process tracker. Each counter is changed with one
    atomic increment of the storage: a request reserves first and gives its
    reservation back when the caps turn out to be passed, so that N processes
    together never pass ``max_requests`` and overshoot a token cap by at most
    one request each. A request waiting for room looks again every
    ``POLL_INTERVAL`` seconds (at once when this process settles one).

    Its storage calls are a few round trips to Redis per request, made on
    worker threads: a reservation waits there within the call's deadline
    (``llmplex.reliability.reserving``), and a settlement is written in the
    background, so a Redis that stops answering holds no call past its
    deadline and no event loop at all.

    A process killed while its requests are in flight leaves their
    reservations held (and in-flight counted) until the counters expire
    (``BUDGET_TTL``); start a new budget under a new name.
    """

    def __init__(
        self,
        budget: Budget | None = None,
        *,
        storage: str | LimitsStore = "memory://",
        name: str = "default",
        estimator: Estimator = estimate_input_tokens,
    ) -> None:
        super().__init__(budget, estimator=estimator)
        self.store = storage if isinstance(storage, LimitsStore) else store_for(LimitsConfig(storage=storage))
        self.name = name
        self._prefix = f"llmplex/budget/{name}/"

    def __repr__(self) -> str:
        return f"SharedBudgetTracker({self.budget!r}, name={self.name!r}, storage={self.store.shown!r})"

    @property
    def does_io(self) -> bool:
        """Whether the counters are in Redis (reserved on a worker thread, within the call's deadline)."""
        return self.store.does_io

    # -- the counters ----------------------------------------------------------------

    def _add_to(self, counter: str, amount: int) -> int:
        key = self._prefix + counter
        return self.store.run(lambda storage: storage.incr(key, BUDGET_TTL, amount=amount))

    def _read(self, *counters: str) -> list[int]:
        keys = [self._prefix + c for c in counters]
        return self.store.run(lambda storage: [int(storage.get(key)) for key in keys])

    def snapshot(self) -> BudgetSnapshot:
        """What every process sharing this budget has consumed (reported usage and requests admitted),
        once this process's settlements are written."""
        _written()
        return _snapshot(*self._read(*_SPENT))

    def record(self, usage: Usage) -> None:
        """Add usage that no reservation accounts for."""
        self._spend(charge(self.budget, usage))
        with self._lock:
            self._changes.notify()

    def _spend(self, counted: Charge) -> None:
        for counter, amount in (
            ("input", counted.input_tokens),
            ("output", counted.output_tokens),
            ("total", counted.total_tokens),
            ("cost_nano_usd", _nano(counted.cost_usd)),
        ):
            if amount:
                self._add_to(counter, amount)

    # -- reservations ----------------------------------------------------------------

    def try_reserve(
        self, estimate: Estimate, provider: str | None = None, model: str | None = None
    ) -> Reservation | int:
        """Reserve ``estimate`` in the shared counters, or return the version to ``wait`` on."""
        budget = self.budget
        version = self._changes.version
        spent = self.snapshot()
        reached = cap_reached(budget, spent)
        if reached is not None:
            raise exhausted(budget, reached, spent, provider, model)
        changes: list[tuple[str, int]] = []
        try:
            requests = self._change(changes, "requests", 1)
            if budget.max_requests is not None and requests > budget.max_requests:
                self._undo(changes)
                spent = BudgetSnapshot(
                    spent.input_tokens, spent.output_tokens, spent.total_tokens, requests - 1, spent.cost_usd
                )
                raise exhausted(budget, ("max_requests", requests - 1, budget.max_requests), spent, provider, model)
            wanted = _held(estimate)
            unbounded = int(estimate.output_tokens is None)
            wanted_cost = _nano(estimate.cost_usd)
            if self.counts_tokens:
                held_counters = (*zip(_HELD, wanted, strict=True), ("unbounded", unbounded), ("held_cost", wanted_cost))
                for counter, amount in held_counters:
                    self._change(changes, counter, amount)
            # holds first, in-flight after, then a fresh read (holds before spending: a settlement written in
            # between is seen twice, never missed). The snapshot above may predate another process's settlement
            # (its spending added, then its hold and in-flight count given back), so a request that finds no
            # other in flight checks the caps again on the fresh read (it still runs alone if they are not
            # reached, as an unbounded answer must); one that finds others checks that it fits beside them.
            others = self._change(changes, "in_flight", 1) - 1
            if self.counts_tokens:
                *held, others_unbounded, held_cost, spent_in, spent_out, spent_total, spent_requests, spent_cost = (
                    self._read(*_HELD, "unbounded", "held_cost", *_SPENT)
                )
                # the requests counter holds this request already (its cap was checked when it was counted)
                spent = _snapshot(spent_in, spent_out, spent_total, spent_requests - 1, spent_cost)
                if not others:
                    reached = cap_reached(budget, spent)
                    if reached is not None:
                        raise exhausted(budget, reached, spent, provider, model)
                else:
                    others_held = (held[0] - wanted[0], held[1] - wanted[1], held[2] - wanted[2])
                    others_cost = Decimal(held_cost - wanted_cost) / _NANO
                    if not fits(budget, estimate, spent, others_held, others_unbounded - unbounded, others_cost):
                        self._undo(changes)
                        return version
        except BaseException:
            self._undo(changes)
            raise
        return Reservation(self, estimate)

    def _change(self, changes: list[tuple[str, int]], counter: str, amount: int) -> int:
        """Add ``amount`` to ``counter`` (remembered in ``changes`` to undo) and return its new value."""
        if not amount:
            return 0
        value = self._add_to(counter, amount)
        changes.append((counter, amount))
        return value

    def _undo(self, changes: list[tuple[str, int]]) -> None:
        while changes:
            counter, amount = changes.pop()
            self._add_to(counter, -amount)

    def _settle(self, reservation: Reservation, usage: Usage | None, sent: bool) -> Charge | None:
        with self._lock:
            if reservation.settled:
                return None
            reservation.settled = True
        estimate = reservation.estimate
        counted = None if usage is None else charge(self.budget, usage, estimate)
        if not self.store.does_io:
            self._write_settlement(estimate, counted, sent)
            return counted
        written = workers.submit(lambda: self._write_settlement(estimate, counted, sent))
        with _writing_lock:
            _writing.add(written)
            _wait_at_exit()
        written.add_done_callback(self._settlement_written)
        return counted

    def _settlement_written(self, written: Future[None]) -> None:
        with _writing_lock:
            _writing.discard(written)
        error = written.exception()
        if error is not None:
            logger.warning("a settlement of the shared budget %r was not written: %s", self.name, error)

    def _write_settlement(self, estimate: Estimate, counted: Charge | None, sent: bool) -> None:
        """Write a settlement to the counters (on a worker thread when they are in Redis: neither the call
        that ends nor an event loop waits for it; ``snapshot`` and the next reservation do)."""
        if counted is not None:
            self._spend(counted)  # before the hold is given back, so that no reader sees the tokens in neither
        if self.counts_tokens:
            for counter, amount in zip(_HELD, _held(estimate), strict=True):
                if amount:
                    self._add_to(counter, -amount)
            if estimate.output_tokens is None:
                self._add_to("unbounded", -1)
            if estimate.cost_usd:
                self._add_to("held_cost", -_nano(estimate.cost_usd))
        if not sent:
            self._add_to("requests", -1)
        self._add_to("in_flight", -1)
        with self._lock:
            self._changes.notify()

    def wait(self, version: int, timeout: float | None) -> None:
        """Wait for this process to settle a request, or ``POLL_INTERVAL`` for the others'."""
        super().wait(version, POLL_INTERVAL if timeout is None else min(timeout, POLL_INTERVAL))

    async def await_change(self, version: int, timeout: float | None) -> None:
        """Async ``wait``."""
        await super().await_change(version, POLL_INTERVAL if timeout is None else min(timeout, POLL_INTERVAL))


def _held(estimate: Estimate) -> tuple[int, int, int]:
    """The (input, output, total) tokens a reservation holds (an unbounded answer holds no output)."""
    return estimate.input_tokens, estimate.output_tokens or 0, estimate.total_tokens or 0


_exit_hook: list[bool] = []


def _wait_at_exit() -> None:
    """Have the interpreter's exit wait for the settlements still being written (once per process): a process
    that ends right after its last call must not lose what that call spent. Called with ``_writing_lock`` held."""
    if not _exit_hook:
        _exit_hook.append(True)
        atexit.register(_written)


def _written() -> None:
    """Wait until this process's settlements are in the storage (each ends by the socket timeouts)."""
    with _writing_lock:
        pending = list(_writing)
    if pending:
        wait_for_futures(pending)
