"""Token and request budgets shared by any number of calls, threads and tasks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from decimal import Decimal
from typing import Any, NamedTuple

from llmplex.config.schema import BudgetConfig
from llmplex.errors import LLMBudgetExceededError, LLMConfigurationError
from llmplex.reliability.estimate import Estimate, Estimator, estimate_input_tokens, estimate_request
from llmplex.reliability.signal import Changes
from llmplex.types import Request, Usage
from llmplex.types.pricing import price_key, price_of

__all__ = [
    "Budget",
    "BudgetSnapshot",
    "BudgetTracker",
    "Charge",
    "Reservation",
    "as_tracker",
    "reserve_all",
]

_MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class Budget:
    """Caps on consumption; ``None`` means no cap.

    Tokens are counted from the usage providers report; ``max_requests`` counts
    requests sent to providers, retries and fallbacks included; ``max_cost_usd``
    caps the US dollars spent (``Usage.cost_usd <llmplex.types.Usage.cost_usd>``):
    under it, a call to a model whose price is unknown is refused before it is
    sent, unless ``unpriced_input_usd_per_mtok`` and ``unpriced_output_usd_per_mtok``
    say what such a model's tokens cost (US dollars per million tokens).
    """

    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    max_requests: int | None = None
    max_cost_usd: Decimal | None = None
    unpriced_input_usd_per_mtok: Decimal | None = None
    unpriced_output_usd_per_mtok: Decimal | None = None

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name.endswith("_usd") or item.name.endswith("_usd_per_mtok"):
                if value is not None:
                    object.__setattr__(self, item.name, _dollars(value, item.name))
            elif value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise LLMConfigurationError(f"budget {item.name} must be a whole number >= 0 or None, got {value!r}")
        if (self.unpriced_input_usd_per_mtok is None) != (self.unpriced_output_usd_per_mtok is None):
            raise LLMConfigurationError(
                "budget unpriced_input_usd_per_mtok and unpriced_output_usd_per_mtok go together: give both "
                "(US dollars per million input and output tokens of a model genai-prices cannot price) or neither"
            )

    def unpriced_cost(self, input_tokens: int, output_tokens: int) -> Decimal | None:
        """What tokens of a model without a known price count as (``None``: the budget does not say)."""
        if self.unpriced_input_usd_per_mtok is None or self.unpriced_output_usd_per_mtok is None:
            return None
        per_million = (
            input_tokens * self.unpriced_input_usd_per_mtok + output_tokens * self.unpriced_output_usd_per_mtok
        )
        return per_million / _MILLION

    @classmethod
    def from_config(cls, config: BudgetConfig) -> Budget:
        """The budget a config's ``[budget]`` table describes."""
        return cls(**config.model_dump(exclude={"name"}))


def _dollars(value: Any, name: str = "max_cost_usd") -> Decimal:
    """A dollar amount as a Decimal (floats through their shortest repr, so 0.1 stays 0.1)."""
    if not isinstance(value, bool) and isinstance(value, (int, float, str, Decimal)):
        try:
            dollars = Decimal(repr(value) if isinstance(value, float) else value)
        except ArithmeticError:
            dollars = Decimal("NaN")
        if dollars.is_finite() and dollars >= 0:
            return dollars
    raise LLMConfigurationError(f"budget {name} must be a number of US dollars >= 0 or None, got {value!r}")


@dataclass(frozen=True)
class BudgetSnapshot:
    """Consumption so far: tokens and dollars from recorded usage, and requests started."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    requests: int = 0
    cost_usd: Decimal = Decimal(0)

    def as_dict(self) -> dict[str, Any]:
        """The snapshot as a plain dict."""
        return asdict(self)


class Charge(NamedTuple):
    """What one settled request counts against a budget."""

    input_tokens: int
    output_tokens: int
    total_tokens: int
    cost_usd: Decimal
    estimated: bool
    """The usage was unknown: the counts are the reservation's (or what was reported, when more)."""


def charge(budget: Budget, usage: Usage, estimate: Estimate | None = None) -> Charge:
    """What ``usage`` counts against ``budget``: the reported usage or, when it is unknown
    (``usage.reported`` false: none reported, or a stream cut off), the larger of each reported count and
    ``estimate``'s reservation (an unbounded answer reserved no output). An answer whose cost is unknown
    counts at the budget's ``unpriced_*`` rates, else at its reserved cost: never as free."""
    reserved = estimate or _NOTHING
    if usage.reported:
        tokens = usage.input_tokens, usage.output_tokens, usage.total_tokens
    else:
        tokens = (
            max(usage.input_tokens, reserved.input_tokens),
            max(usage.output_tokens, reserved.output_tokens or 0),
            0,
        )
        tokens = (tokens[0], tokens[1], tokens[0] + tokens[1])
    cost = Decimal(0)
    if budget.max_cost_usd is not None:  # only then is the cost worth computing
        fallback = budget.unpriced_cost(tokens[0], tokens[1])
        costs = (usage.cost_usd, fallback, reserved.cost_usd) if usage.reported else (reserved.cost_usd, fallback)
        cost = next((c for c in costs if c is not None), Decimal(0))
    return Charge(*tokens, cost, estimated=not usage.reported)


class Reservation:
    """One request's hold on a ``BudgetTracker``: made before sending, settled once, after."""

    __slots__ = ("estimate", "settled", "tracker")

    def __init__(self, tracker: BudgetTracker, estimate: Estimate) -> None:
        self.tracker = tracker
        self.estimate = estimate
        self.settled = False

    def settle(self, usage: Usage | None) -> Charge | None:
        """Replace the estimate with the usage the provider reported (``None``: the attempt failed; an unknown
        usage counts the estimate, see ``charge``); returns what was counted (``None``: nothing, or settled)."""
        return self.tracker._settle(self, usage, sent=True)

    def cancel(self) -> None:
        """Give the request back: it was not sent after all."""
        self.tracker._settle(self, None, sent=False)


class BudgetTracker:
    """Counts consumption against a ``Budget``; safe to share across threads and asyncio tasks.

    Each request reserves an estimate before it is sent — its prompt (see
    ``estimator``) plus its ``max_tokens`` — and settles to the usage the
    provider reports after, so concurrency cannot overshoot a token cap by more
    than one request. A request is admitted when its estimate fits beside the
    usage and the reservations already made, or when nothing else is in flight;
    otherwise it waits for in-flight requests to settle. Once recorded usage
    reaches a cap, requests fail with
    ``LLMBudgetExceededError`` before they are sent.
    ``max_requests`` counts requests when they are admitted, so it is exact.

    ``estimator`` returns the input tokens of a request (default:
    ``estimate_input_tokens``, characters / 4).
    """

    def __init__(self, budget: Budget | None = None, *, estimator: Estimator = estimate_input_tokens) -> None:
        self.budget = budget or Budget()
        self.estimator = estimator
        self._changes = Changes()
        self._lock = self._changes.lock
        self._input = self._output = self._total = self._requests = 0
        self._held_input = self._held_output = self._held_total = 0
        self._cost = self._held_cost = Decimal(0)
        self._in_flight = self._unbounded = 0

    def __repr__(self) -> str:
        return f"BudgetTracker({self.budget!r}, {self.snapshot()!r})"

    @property
    def does_io(self) -> bool:
        """Whether reserving and settling may wait on the network (a shared budget in Redis)."""
        return False

    @property
    def counts_tokens(self) -> bool:
        """Whether any token or cost cap is set (only then are requests estimated)."""
        budget = self.budget
        caps = (budget.max_input_tokens, budget.max_output_tokens, budget.max_total_tokens, budget.max_cost_usd)
        return any(c is not None for c in caps)

    def snapshot(self) -> BudgetSnapshot:
        """What has been consumed so far (reported usage; reservations in flight are not counted)."""
        with self._lock:
            return self._spent()

    def _spent(self) -> BudgetSnapshot:
        return BudgetSnapshot(self._input, self._output, self._total, self._requests, self._cost)

    def record(self, usage: Usage) -> None:
        """Add usage that no reservation accounts for (e.g. reported by another system)."""
        with self._lock:
            self._add(charge(self.budget, usage))
            self._notify()

    # -- reservations ----------------------------------------------------------------

    def try_reserve(
        self, estimate: Estimate, provider: str | None = None, model: str | None = None
    ) -> Reservation | int:
        """Reserve ``estimate`` for one request, or return the version to ``wait`` on when it must wait.

        Raises ``LLMBudgetExceededError`` when a cap is already reached by recorded usage.
        """
        budget = self.budget
        with self._lock:
            spent = self._spent()
            reached = cap_reached(budget, spent)
            if reached is None:
                held = (self._held_input, self._held_output, self._held_total)
                if self._in_flight and not fits(budget, estimate, spent, held, self._unbounded, self._held_cost):
                    return self._changes.version
                self._requests += 1
                self._in_flight += 1
                self._held_input += estimate.input_tokens
                if estimate.output_tokens is None:
                    self._unbounded += 1
                else:
                    self._held_output += estimate.output_tokens
                    self._held_total += estimate.input_tokens + estimate.output_tokens
                self._held_cost += estimate.cost_usd or 0
                return Reservation(self, estimate)
        raise exhausted(budget, reached, spent, provider, model)

    def wait(self, version: int, timeout: float | None) -> None:
        """Block until a reservation settles after ``version`` was returned, or ``timeout`` seconds pass."""
        self._changes.wait(version, timeout)

    async def await_change(self, version: int, timeout: float | None) -> None:
        """Async ``wait``: the event loop keeps running meanwhile."""
        await self._changes.await_change(version, timeout)

    def _settle(self, reservation: Reservation, usage: Usage | None, sent: bool) -> Charge | None:
        counted = None if usage is None else charge(self.budget, usage, reservation.estimate)
        with self._lock:
            if reservation.settled:
                return None
            reservation.settled = True
            estimate = reservation.estimate
            self._in_flight -= 1
            self._held_input -= estimate.input_tokens
            if estimate.output_tokens is None:
                self._unbounded -= 1
            else:
                self._held_output -= estimate.output_tokens
                self._held_total -= estimate.input_tokens + estimate.output_tokens
            self._held_cost -= estimate.cost_usd or 0
            if not sent:
                self._requests -= 1
            if counted is not None:
                self._add(counted)
            self._notify()
        return counted

    def _add(self, counted: Charge) -> None:
        self._input += counted.input_tokens
        self._output += counted.output_tokens
        self._total += counted.total_tokens
        self._cost += counted.cost_usd

    def _notify(self) -> None:
        self._changes.notify()


def cap_reached(budget: Budget, spent: BudgetSnapshot) -> tuple[str, int | Decimal, int | Decimal] | None:
    """The first cap that recorded usage has reached, as (name, used, cap), or ``None``."""
    for name, used, cap in (
        ("max_requests", spent.requests, budget.max_requests),
        ("max_input_tokens", spent.input_tokens, budget.max_input_tokens),
        ("max_output_tokens", spent.output_tokens, budget.max_output_tokens),
        ("max_total_tokens", spent.total_tokens, budget.max_total_tokens),
        ("max_cost_usd", spent.cost_usd, budget.max_cost_usd),
    ):
        if cap is not None and used >= cap:
            return name, used, cap
    return None


def fits(
    budget: Budget,
    estimate: Estimate,
    spent: BudgetSnapshot,
    held: tuple[int, int, int],
    unbounded: int,
    held_cost: Decimal = Decimal(0),
) -> bool:
    """Whether ``estimate`` fits beside recorded usage and the (input, output, total) tokens and the
    ``held_cost`` dollars held by reservations; ``unbounded`` counts reservations without ``max_tokens``."""
    cap = budget.max_input_tokens
    if cap is not None and spent.input_tokens + held[0] + estimate.input_tokens > cap:
        return False
    for cap, used, reserved, wanted in (
        (budget.max_output_tokens, spent.output_tokens, held[1], estimate.output_tokens),
        (budget.max_total_tokens, spent.total_tokens, held[2], estimate.total_tokens),
    ):
        if cap is not None and (wanted is None or unbounded or used + reserved + wanted > cap):
            return False  # an answer without max_tokens could take all that is left: it runs alone
    cap_usd, wanted_usd = budget.max_cost_usd, estimate.cost_usd
    if cap_usd is None:
        return True
    bounded = wanted_usd is not None and estimate.output_tokens is not None  # an unbounded cost holds its input's
    return bounded and not unbounded and spent.cost_usd + held_cost + (wanted_usd or 0) <= cap_usd


def exhausted(
    budget: Budget,
    reached: tuple[str, int | Decimal, int | Decimal],
    spent: BudgetSnapshot,
    provider: str | None,
    model: str | None,
) -> LLMBudgetExceededError:
    """The error of a request refused because cap ``reached`` is used up."""
    name, used, cap = reached
    return LLMBudgetExceededError(
        f"budget exhausted before sending: {used} {name.removeprefix('max_').replace('_', ' ')} used, "
        f"{name}={cap}; raise the cap or track with a new BudgetTracker",
        provider=provider,
        model=model,
        attempts=0,
        snapshot=spent.as_dict(),
        context={"budget": asdict(budget)},
    )


_NOTHING = Estimate(0, 0)


def _priced(
    budget: Budget, estimate: Estimate, plugin: str | None, provider: str | None, model: str | None
) -> Estimate:
    """``estimate`` with its cost at the model's price (or the budget's ``unpriced_*`` rates); a model
    without a known price cannot be capped otherwise."""
    key = price_key(plugin or "", model or "")
    unit = None if key is None else price_of(key, 1, 0, 0, 1, 0)
    if key is None or unit is None:
        if budget.unpriced_cost(1, 1) is None:
            raise LLMConfigurationError(
                f"budget max_cost_usd is set but the price of {provider}:{model} is unknown to genai-prices, "
                "so its cost cannot be capped; use a priced model, say what its tokens cost with "
                "unpriced_input_usd_per_mtok and unpriced_output_usd_per_mtok, drop max_cost_usd, "
                "or cap tokens instead",
                provider=provider,
                model=model,
                attempts=0,
            )
        return replace(estimate, cost_usd=budget.unpriced_cost(estimate.input_tokens, estimate.output_tokens or 0))
    # an unbounded answer holds the cost of its prompt alone (what an unknown usage counts at least) and runs alone
    return replace(estimate, cost_usd=price_of(key, estimate.input_tokens, 0, 0, estimate.output_tokens or 0, 0))


def reserve_all(
    trackers: Sequence[BudgetTracker],
    request: Request,
    provider: str | None,
    model: str | None,
    plugin: str | None = None,
) -> list[Reservation] | tuple[BudgetTracker, int]:
    """Reserve on every tracker, or give back what was reserved and say which tracker to wait on
    (``llmplex.reliability.reserving`` waits, within the call's deadline)."""
    held: list[Reservation] = []
    estimates: dict[Estimator, Estimate] = {}
    try:
        for tracker in trackers:
            estimate = _NOTHING
            if tracker.counts_tokens:
                estimate = estimates.get(tracker.estimator) or estimate_request(request, tracker.estimator)
                estimates[tracker.estimator] = estimate
            if tracker.budget.max_cost_usd is not None:
                estimate = _priced(tracker.budget, estimate, plugin, provider, model)
            got = tracker.try_reserve(estimate, provider, model)
            if not isinstance(got, Reservation):
                for reservation in held:
                    reservation.cancel()
                return tracker, got
            held.append(got)
    except BaseException:
        for reservation in held:
            reservation.cancel()
        raise
    return held


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
