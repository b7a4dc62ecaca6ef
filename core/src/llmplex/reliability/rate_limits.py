"""A provider instance's own limits: requests and tokens per window, and calls in flight.

``rate_limit`` and ``token_rate_limit`` are rate strings of the ``limits``
library (``"500/minute"``, ``"10/second;500/minute"``), counted in moving
windows in the ``[limits]`` storage: with Redis, every process and host using
the same config and prefix shares them. A request is *admitted* when every
window has room for it (one request, and its estimated tokens: prompt
characters / 4 plus ``max_tokens``); the limits hold at that moment — no
window of admissions, as the storage's timestamps place them, ever holds more
than its limit (each process stamps its own admissions). After the answer, its
reported tokens replace the estimate where they are more (tokens reserved but
not used stay counted until they leave the window, as the provider's own
limiter counts ``max_tokens``). ``max_concurrency`` caps the calls in flight in
this process.

Each look at the storage ends by the call's deadline, whatever Redis does; the
tokens an answer used beyond its estimate are charged on a worker thread, so
neither the call nor an event loop waits on Redis for them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llmplex.errors import LLMConfigurationError, LLMDeadlineExceededError, LLMRateLimitError
from llmplex.reliability import workers
from llmplex.reliability.clock import Clock
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.estimate import estimate_request
from llmplex.reliability.signal import Changes
from llmplex.reliability.storage import LimitsStore, moving_window
from llmplex.types import Request, Usage

if TYPE_CHECKING:
    from limits import RateLimitItem

__all__ = ["MIN_WAIT", "Permit", "ProviderLimits", "WaitReport"]

MIN_WAIT = 0.001
"""Shortest wait before trying a full window again (a race with another process lost)."""

WaitReport = Callable[[float, str], None]
"""Told ``(seconds, why)`` before each wait for a limit: the engine turns it into a ``Throttled`` event."""


@dataclass(frozen=True)
class _Window:
    """One rate of one limit, as the ``limits`` library counts it."""

    key: str  # the config key: rate_limit or token_rate_limit
    item: RateLimitItem
    identifiers: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.key} ({self.item})"


class Permit:
    """One admitted attempt: settle it with the usage it reported (or ``None``) when it ends."""

    __slots__ = ("cost", "done", "limits", "slot")

    def __init__(self, limits: ProviderLimits, cost: int, slot: bool) -> None:
        self.limits = limits
        self.cost = cost
        self.slot = slot
        self.done = False

    def settle(self, usage: Usage | None) -> None:
        """Free the concurrency slot; charge the tokens the answer used beyond the estimate."""
        if self.done:
            return
        self.done = True
        if self.slot:
            self.limits._release()
        if usage is not None:
            self.limits._charge(usage.total_tokens or usage.input_tokens + usage.output_tokens, self.cost)


class ProviderLimits:
    """The limits of one provider instance (``[providers.<prefix>]`` ``rate_limit``, ``token_rate_limit``,
    ``max_concurrency``), kept in ``store``."""

    def __init__(
        self,
        prefix: str,
        store: LimitsStore,
        rate_limit: str | None = None,
        token_rate_limit: str | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        self.prefix = prefix
        self.store = store
        self.max_concurrency = max_concurrency
        self._requests = [_Window("rate_limit", i, ("llmplex", prefix, "requests")) for i in _rates(rate_limit)]
        self._tokens = [_Window("token_rate_limit", i, ("llmplex", prefix, "tokens")) for i in _rates(token_rate_limit)]
        self._slots = _slots_for(prefix)
        self._lock = threading.Lock()
        self._owed = 0  # tokens used beyond estimates that no window had room for yet

    def __repr__(self) -> str:
        rates = ", ".join(w.describe() for w in (*self._requests, *self._tokens))
        return f"ProviderLimits({self.prefix!r}, {rates or 'no rates'}, max_concurrency={self.max_concurrency})"

    @classmethod
    def from_table(cls, prefix: str, table: Mapping[str, Any], store: LimitsStore) -> ProviderLimits | None:
        """The limits a ``[providers.<prefix>]`` table sets, or ``None`` when it sets none."""
        rate, tokens, concurrency = (table.get(k) for k in ("rate_limit", "token_rate_limit", "max_concurrency"))
        if rate is None and tokens is None and concurrency is None:
            return None
        return cls(prefix, store, rate, tokens, concurrency)

    # -- admission -------------------------------------------------------------------

    def admit(self, request: Request, deadline: Deadline | None, clock: Clock, report: WaitReport) -> Permit:
        """Wait (within ``deadline``) until ``request`` may be sent; raise when the wait would pass it."""
        cost = self._cost(request)
        slot = self._take_slot(deadline, report)
        try:
            while True:
                wait = self.store.run(lambda storage: self._try(storage, cost), deadline)
                if wait is None:
                    return Permit(self, cost, slot)
                clock.sleep(self._allow(wait, deadline, report))
        except BaseException:
            if slot:
                self._release()
            raise

    async def aadmit(self, request: Request, deadline: Deadline | None, clock: Clock, report: WaitReport) -> Permit:
        """Async ``admit``: waits do not block the event loop."""
        cost = self._cost(request)
        slot = await self._atake_slot(deadline, report)
        try:
            while True:
                wait = await self.store.arun(lambda storage: self._atry(storage, cost), deadline)
                if wait is None:
                    return Permit(self, cost, slot)
                await clock.asleep(self._allow(wait, deadline, report))
        except BaseException:
            if slot:
                self._release()
            raise

    def _cost(self, request: Request) -> int:
        if not self._tokens:
            return 0
        estimate = estimate_request(request)
        cost = estimate.input_tokens + (estimate.output_tokens or 0)
        for window in self._tokens:
            if cost > window.item.amount:
                raise LLMConfigurationError(
                    f"the request needs about {cost} tokens (prompt characters / 4 + max_tokens), more than "
                    f"providers.{self.prefix}.{window.describe()} allows in a whole window: shorten the prompt, "
                    "lower max_tokens or raise the limit",
                    provider=self.prefix,
                    model=request.model,
                    attempts=0,
                )
        return cost

    def _plan(self, cost: int) -> tuple[list[tuple[_Window, int]], int]:
        """What to take from each window, and how much of the owed tokens that pays off."""
        if not self._tokens:
            return [(w, 1) for w in self._requests], 0
        owed = min(self._owed, min(w.item.amount for w in self._tokens) - cost)
        return [(w, 1) for w in self._requests] + [(w, cost + owed) for w in self._tokens], owed

    def _try(self, storage: Any, cost: int) -> tuple[float, _Window] | None:
        """Take room in every window, or say how long to wait and for which.

        Windows after the first are tested before any is taken, so that a full one
        does not waste room in the others (only a lost race with another process can).
        """
        limiter = moving_window(storage)
        plan, owed = self._plan(cost)
        for window, amount in plan[1:]:
            if not limiter.test(window.item, *window.identifiers, cost=amount):
                return self._wait(limiter.get_window_stats(window.item, *window.identifiers).reset_time, window)
        for window, amount in plan:
            if not limiter.hit(window.item, *window.identifiers, cost=amount):
                return self._wait(limiter.get_window_stats(window.item, *window.identifiers).reset_time, window)
        self._paid(owed)
        return None

    async def _atry(self, storage: Any, cost: int) -> tuple[float, _Window] | None:
        """Async ``_try`` on an async storage (the memory storage is used as it is: it does no I/O)."""
        from limits.aio.storage import Storage as AsyncStorage

        if not isinstance(storage, AsyncStorage):
            return self._try(storage, cost)
        limiter = moving_window(storage)
        plan, owed = self._plan(cost)
        for window, amount in plan[1:]:
            if not await limiter.test(window.item, *window.identifiers, cost=amount):
                stats = await limiter.get_window_stats(window.item, *window.identifiers)
                return self._wait(stats.reset_time, window)
        for window, amount in plan:
            if not await limiter.hit(window.item, *window.identifiers, cost=amount):
                stats = await limiter.get_window_stats(window.item, *window.identifiers)
                return self._wait(stats.reset_time, window)
        self._paid(owed)
        return None

    def _paid(self, owed: int) -> None:
        if owed:
            with self._lock:
                self._owed -= owed

    @staticmethod
    def _wait(reset_time: float, window: _Window) -> tuple[float, _Window]:
        return max(MIN_WAIT, reset_time - time.time()), window

    def _allow(self, wait: tuple[float, _Window], deadline: Deadline | None, report: WaitReport) -> float:
        """The seconds to sleep for ``wait``, reported; raises when they would pass the deadline."""
        seconds, window = wait
        remaining = None if deadline is None else deadline.remaining()
        if remaining is not None and seconds >= remaining:
            raise LLMRateLimitError(
                f"providers.{self.prefix}.{window.describe()} is used up for the next {seconds:.3g}s, "
                f"more than the {remaining:.3g}s left before the deadline",
                provider=self.prefix,
                retry_after=seconds,
                attempts=0,
                context={"limit": window.key, "rate": str(window.item), "storage": self.store.shown},
            )
        report(seconds, window.key)
        return seconds

    def _charge(self, used: int, cost: int) -> None:
        """Count tokens an answer used beyond its estimate; what no window has room for is owed by the next."""
        extra = used - cost
        if extra <= 0 or not self._tokens:
            return

        def hit(storage: Any) -> bool:
            limiter = moving_window(storage)
            return all(limiter.hit(w.item, *w.identifiers, cost=min(extra, w.item.amount)) for w in self._tokens)

        def charge() -> None:
            if not self.store.run(hit):
                with self._lock:
                    self._owed += extra

        if self.store.does_io:
            workers.submit(charge)  # a slow or frozen Redis holds neither the answer nor an event loop
        else:
            charge()

    # -- concurrency -----------------------------------------------------------------

    def _free_slot(self) -> int | None:
        """Take a slot (``None``), or return the version to wait on."""
        slots = self._slots
        with slots.changes.lock:
            if slots.in_flight < (self.max_concurrency or 0):
                slots.in_flight += 1
                return None
            return slots.changes.version

    def _slot_wait(self, deadline: Deadline | None, report: WaitReport | None) -> float | None:
        """Seconds a wait for a slot may take (``None``: no deadline); the first wait is reported."""
        remaining = None if deadline is None else deadline.remaining()
        if remaining is not None and remaining <= 0:
            raise LLMDeadlineExceededError(
                f"deadline reached while providers.{self.prefix}.max_concurrency ({self.max_concurrency}) "
                "calls were in flight",
                provider=self.prefix,
                attempts=0,
                context={"limit": "max_concurrency"},
            )
        if report is not None:
            report(0.0, "max_concurrency")
        return remaining

    def _take_slot(self, deadline: Deadline | None, report: WaitReport) -> bool:
        if self.max_concurrency is None:
            return False
        first: WaitReport | None = report
        while (version := self._free_slot()) is not None:
            self._slots.changes.wait(version, self._slot_wait(deadline, first))
            first = None
        return True

    async def _atake_slot(self, deadline: Deadline | None, report: WaitReport) -> bool:
        if self.max_concurrency is None:
            return False
        first: WaitReport | None = report
        while (version := self._free_slot()) is not None:
            await self._slots.changes.await_change(version, self._slot_wait(deadline, first))
            first = None
        return True

    def _release(self) -> None:
        slots = self._slots
        with slots.changes.lock:
            slots.in_flight -= 1
            slots.changes.notify()


class _Slots:
    """The calls in flight to one provider prefix in this process, whichever Client sends them."""

    def __init__(self) -> None:
        self.changes = Changes()
        self.in_flight = 0


_slots: dict[str, _Slots] = {}
_slots_lock = threading.Lock()


def _slots_for(prefix: str) -> _Slots:
    with _slots_lock:
        return _slots.setdefault(prefix, _Slots())


def _rates(rate: str | None) -> list[RateLimitItem]:
    if rate is None:
        return []
    from limits import parse_many

    return parse_many(rate)
