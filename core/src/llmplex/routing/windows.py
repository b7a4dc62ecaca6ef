"""A deployment's own ``rpm`` and ``tpm``: moving one-minute windows of the ``limits`` library.

Unlike a provider instance's limits, which wait for room, a deployment at its
limit is skipped: the group sends the request to another one. A request costs
one request and its estimated tokens (prompt characters / 4 plus
``max_tokens``). A first attempt may leave a reserve of each window (the
group's ``hedge_reserve``) for hedges and retries: it skips a deployment whose
room is down to the reserve. The windows live in the ``[limits] storage``
(Redis: shared by every process) or, for ``memory://`` and while Redis does
not answer in time (``llmplex.routing.reach``), in this client's own memory
storage.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from llmplex.errors import LLMError
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.guard import call_before
from llmplex.reliability.storage import LimitsStore, moving_window
from llmplex.routing.reach import Reach

if TYPE_CHECKING:
    from limits import RateLimitItem

__all__ = ["Windows"]


class _LateError(Exception):
    """Redis did not answer within the wait."""


class Windows:
    """The rpm and tpm windows of one deployment (``key``: group and model string)."""

    def __init__(
        self, key: str, rpm: int | None, tpm: int | None, store: LimitsStore, local: Any, reach: Reach
    ) -> None:
        from limits import RateLimitItemPerMinute

        self.key = key
        self.store = store
        self.local = local
        self.reach = reach
        self._items: list[tuple[RateLimitItem, int | None, str]] = []
        if rpm is not None:
            self._items.append((RateLimitItemPerMinute(rpm), None, "rpm"))
        if tpm is not None:
            self._items.append((RateLimitItemPerMinute(tpm), 0, "tpm"))

    @property
    def limited(self) -> bool:
        """Whether this deployment has an rpm or tpm."""
        return bool(self._items)

    def take(self, tokens: int, reserve: float = 0.0) -> float | None:
        """Count one request of ``tokens`` in every window (``None``), or the seconds until one has room for it
        (nothing counted); ``reserve``: the share of each window that must stay free after it."""
        if not self._items:
            return None
        taken: float | None = self._run(lambda storage: self._take(storage, tokens, reserve))
        return taken

    def headroom(self) -> float:
        """The smallest share of a window left (1.0: untouched or no limit)."""
        if not self._items:
            return 1.0
        share: float = self._run(self._headroom)
        return share

    def _take(self, storage: Any, tokens: int, reserve: float) -> float | None:
        limiter = moving_window(storage)
        plan = [(item, 1 if cost is None else max(1, tokens)) for item, cost, _ in self._items]
        for item, amount in plan:
            kept = math.floor(reserve * item.amount)
            if amount > item.amount or not limiter.test(item, "llmplex-group", self.key, cost=amount + kept):
                return self._reset(limiter, item, amount)
        for item, amount in plan:
            if not limiter.hit(item, "llmplex-group", self.key, cost=amount):
                return self._reset(limiter, item, amount)
        return None

    def _reset(self, limiter: Any, item: RateLimitItem, amount: int) -> float:
        if amount > item.amount:
            return 60.0
        stats = limiter.get_window_stats(item, "llmplex-group", self.key)
        return max(0.001, float(stats.reset_time) - time.time())

    def _headroom(self, storage: Any) -> float:
        limiter = moving_window(storage)
        shares = [
            limiter.get_window_stats(item, "llmplex-group", self.key).remaining / item.amount
            for item, _, _ in self._items
        ]
        return float(min(shares))

    def _run(self, operation: Any) -> Any:
        if not self.store.does_io:
            return operation(self.local)
        if self.reach.local:
            return operation(self.local)
        wait = Deadline.after(self.reach.wait(None))
        try:
            done = call_before(lambda: operation(self.store.storage()), wait, _LateError)
        except (_LateError, LLMError, OSError, _storage_error()):  # a Redis that fails or stalls: count here
            self.reach.failed()
            return operation(self.local)
        self.reach.connected = True
        return done


def _storage_error() -> type[Exception]:
    from limits.errors import StorageError

    return StorageError
