"""weakincentives' ``Deadline``, ``Budget`` and ``BudgetTracker``, enforced by llmplex's deadline and budget.

A weakincentives deadline is a wall-clock ``datetime``; each evaluation turns
the time left into an llmplex ``Deadline``
(monotonic), which bounds every attempt, retry wait and tool round. A
``BudgetTracker`` wraps an llmplex tracker that the engine admits requests
against and records usage into; ``check()`` keeps weakincentives' rule of
failing once consumption is *over* a cap.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from typing import Literal

from llmplex.compat.weakincentives.errors import InvalidValueError
from llmplex.compat.weakincentives.events import TokenUsage
from llmplex.errors import LLMBudgetExceededError
from llmplex.reliability import budget as engine
from llmplex.reliability.deadline import Deadline as EngineDeadline
from llmplex.types import Usage

__all__ = ["Budget", "BudgetExceededDimension", "BudgetExceededError", "BudgetTracker", "Deadline", "engine_deadline"]

BudgetExceededDimension = Literal["deadline", "total_tokens", "input_tokens", "output_tokens"]


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Deadline:
    """A wall-clock expiry: timezone-aware and at least one second in the future when created."""

    expires_at: datetime

    def __post_init__(self) -> None:
        if self.expires_at.tzinfo is None or self.expires_at.utcoffset() is None:
            raise InvalidValueError("Deadline expires_at must be timezone-aware (e.g. datetime.now(UTC) + ...)")
        left = self.expires_at - _utcnow()
        if left <= timedelta(0):
            raise InvalidValueError("Deadline expires_at must be in the future")
        if left < timedelta(seconds=1):
            raise InvalidValueError("Deadline must be at least one second in the future")

    def remaining(self, *, now: datetime | None = None) -> timedelta:
        """Time left before ``expires_at`` (negative once it has passed)."""
        current = now or _utcnow()
        if current.tzinfo is None or current.utcoffset() is None:
            raise InvalidValueError("Deadline.remaining(now=...) must be timezone-aware")
        return self.expires_at - current


def engine_deadline(*deadlines: Deadline | None) -> EngineDeadline | None:
    """The earliest of ``deadlines`` as an llmplex deadline (``None`` when none is given)."""
    given = [d for d in deadlines if d is not None]
    if not given:
        return None
    seconds = min(d.remaining() for d in given).total_seconds()
    return EngineDeadline.after(max(0.0, seconds))


@dataclass(frozen=True)
class Budget:
    """Limits on time and tokens; at least one must be set and token limits must be positive."""

    deadline: Deadline | None = None
    max_total_tokens: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None

    def __post_init__(self) -> None:
        limits = [getattr(self, item.name) for item in fields(self)]
        if all(limit is None for limit in limits):
            raise InvalidValueError("Budget requires at least one limit to be set")
        for name in ("max_total_tokens", "max_input_tokens", "max_output_tokens"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                raise InvalidValueError(f"{name} must be a positive whole number, got {value!r}")


class BudgetExceededError(LLMBudgetExceededError, RuntimeError):
    """A budget limit was passed; ``exceeded_dimension`` says which."""

    def __init__(self, budget: Budget, consumed: TokenUsage, exceeded_dimension: BudgetExceededDimension) -> None:
        super().__init__(f"Budget exceeded: {exceeded_dimension}")
        self.budget = budget
        self.consumed = consumed
        self.exceeded_dimension: BudgetExceededDimension = exceeded_dimension


class BudgetTracker:
    """Consumption against a ``Budget``, shared by any number of evaluations and threads.

    The engine reserves each request against it before sending (a cap already
    reached stops new requests) and records the usage every answer reports.
    """

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.engine = engine.BudgetTracker(
            engine.Budget(
                max_input_tokens=budget.max_input_tokens,
                max_output_tokens=budget.max_output_tokens,
                max_total_tokens=budget.max_total_tokens,
            )
        )
        self._lock = threading.Lock()
        self._cumulative: dict[str, TokenUsage] = {}
        self._cached = 0

    def __repr__(self) -> str:
        return f"BudgetTracker({self.budget!r}, consumed={self.consumed!r})"

    def record(self, usage: Usage) -> None:
        """Note the cached tokens of one answer (the engine already counted the rest)."""
        with self._lock:
            self._cached += usage.cached_tokens

    def record_cumulative(self, evaluation_id: str, usage: TokenUsage) -> None:
        """Set the usage of ``evaluation_id`` so far (replacing what was recorded for it before)."""
        with self._lock:
            before = self._cumulative.get(evaluation_id, TokenUsage())
            self._cumulative[evaluation_id] = usage
            self._cached += (usage.cached_tokens or 0) - (before.cached_tokens or 0)
        delta_in = (usage.input_tokens or 0) - (before.input_tokens or 0)
        delta_out = (usage.output_tokens or 0) - (before.output_tokens or 0)
        self.engine.record(Usage(input_tokens=delta_in, output_tokens=delta_out, total_tokens=delta_in + delta_out))

    @property
    def consumed(self) -> TokenUsage:
        """Tokens used so far by every evaluation sharing this tracker."""
        snapshot = self.engine.snapshot()
        with self._lock:
            cached = self._cached
        return TokenUsage(
            input_tokens=snapshot.input_tokens, output_tokens=snapshot.output_tokens, cached_tokens=cached
        )

    def check(self) -> None:
        """Raise ``BudgetExceededError`` when the deadline passed or a token total is over its cap."""
        budget = self.budget
        if budget.deadline is not None and budget.deadline.remaining() <= timedelta(0):
            raise BudgetExceededError(budget, self.consumed, "deadline")
        consumed = self.consumed
        for dimension, used, cap in (
            ("input_tokens", consumed.input_tokens, budget.max_input_tokens),
            ("output_tokens", consumed.output_tokens, budget.max_output_tokens),
            ("total_tokens", consumed.total_tokens, budget.max_total_tokens),
        ):
            if cap is not None and (used or 0) > cap:
                raise BudgetExceededError(budget, consumed, dimension)  # type: ignore[arg-type]
