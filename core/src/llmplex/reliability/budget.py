"""Token and request budgets shared by any number of calls, threads and tasks."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from llmplex.config.schema import BudgetConfig
from llmplex.errors import LLMBudgetExceededError, LLMConfigurationError
from llmplex.types import Usage

__all__ = ["Budget", "BudgetSnapshot", "BudgetTracker", "as_tracker"]


@dataclass(frozen=True)
class Budget:
    """Caps on consumption; ``None`` means no cap.

    Tokens are counted from the usage providers report; ``max_requests`` counts
    requests sent to providers, retries and fallbacks included.
    """

    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    max_requests: int | None = None

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise LLMConfigurationError(f"budget {item.name} must be a whole number >= 0 or None, got {value!r}")

    @classmethod
    def from_config(cls, config: BudgetConfig) -> Budget:
        """The budget a config's ``[budget]`` table describes."""
        return cls(**config.model_dump())


@dataclass(frozen=True)
class BudgetSnapshot:
    """Consumption so far: tokens from recorded usage and requests started."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    requests: int = 0

    def as_dict(self) -> dict[str, int]:
        """The snapshot as a plain dict."""
        return asdict(self)


class BudgetTracker:
    """Counts consumption against a :class:`Budget`; safe to share across threads and asyncio tasks.

    Before each request is sent, :meth:`admit` fails with
    :class:`~llmplex.errors.LLMBudgetExceededError` when a cap is already
    reached (requests are reserved atomically, so ``max_requests`` is exact);
    after each answer, :meth:`record` adds the usage the provider reported.
    Calls that are already in flight may carry token totals past a cap: a
    budget stops new requests, it never cuts an answer short.
    """

    def __init__(self, budget: Budget | None = None) -> None:
        self.budget = budget or Budget()
        self._lock = threading.Lock()
        self._input = self._output = self._total = self._requests = 0

    def __repr__(self) -> str:
        return f"BudgetTracker({self.budget!r}, {self.snapshot()!r})"

    def snapshot(self) -> BudgetSnapshot:
        """What has been consumed so far."""
        with self._lock:
            return BudgetSnapshot(self._input, self._output, self._total, self._requests)

    def admit(self, provider: str | None = None, model: str | None = None) -> None:
        """Reserve one request, or raise ``LLMBudgetExceededError`` when a cap is already reached."""
        budget = self.budget
        with self._lock:
            spent = self._spent_cap(budget)
            if spent is None:
                self._requests += 1
                return
            snapshot = BudgetSnapshot(self._input, self._output, self._total, self._requests)
        name, used, cap = spent
        raise LLMBudgetExceededError(
            f"budget exhausted before sending: {used} {name.removeprefix('max_').replace('_', ' ')} used, "
            f"{name}={cap}; raise the cap or track with a new BudgetTracker",
            provider=provider,
            model=model,
            attempts=0,
            snapshot=snapshot.as_dict(),
            context={"budget": asdict(budget)},
        )

    def release(self) -> None:
        """Give back a request reserved by :meth:`admit` that was not sent after all."""
        with self._lock:
            self._requests -= 1

    def record(self, usage: Usage) -> None:
        """Add the usage of one answer."""
        with self._lock:
            self._input += usage.input_tokens
            self._output += usage.output_tokens
            self._total += usage.total_tokens

    def _spent_cap(self, budget: Budget) -> tuple[str, int, int] | None:
        for name, used, cap in (
            ("max_requests", self._requests, budget.max_requests),
            ("max_input_tokens", self._input, budget.max_input_tokens),
            ("max_output_tokens", self._output, budget.max_output_tokens),
            ("max_total_tokens", self._total, budget.max_total_tokens),
        ):
            if cap is not None and used >= cap:
                return name, used, cap
        return None


def as_tracker(budget: Any) -> BudgetTracker | None:
    """A call's ``budget=`` (Budget, BudgetTracker, mapping of Budget fields, or None) as a tracker."""
    if budget is None or isinstance(budget, BudgetTracker):
        return budget
    if isinstance(budget, Mapping):
        names = [f.name for f in fields(Budget)]
        unknown = sorted(set(budget) - set(names))
        if unknown:
            raise LLMConfigurationError(
                f"unknown budget setting {', '.join(map(repr, unknown))}; valid settings: {', '.join(names)}"
            )
        budget = Budget(**budget)
    if isinstance(budget, Budget):
        return BudgetTracker(budget)
    raise LLMConfigurationError(
        "budget must be an llmplex.Budget, an llmplex.BudgetTracker or a mapping such as "
        f"{{'max_total_tokens': 10000}}, got {type(budget).__name__}"
    )
