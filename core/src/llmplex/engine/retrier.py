"""Per-route retry bookkeeping shared by the sync, async and streaming loops."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from llmplex.engine.attempt import Attempt
from llmplex.engine.telemetry import Telemetry
from llmplex.errors import LLMDeadlineExceededError, LLMError, LLMTimeoutError
from llmplex.events import RequestStarted, Throttled, UsageUnknown
from llmplex.reliability.budget import BudgetTracker, Reservation
from llmplex.reliability.clock import Clock
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.rate_limits import Permit, ProviderLimits
from llmplex.reliability.reserving import areserve, reserve
from llmplex.reliability.throttle import ThrottlePolicy
from llmplex.types import Request, Usage

__all__ = ["FailedAttempt", "Retrier", "RetryPlan"]

DEADLINE_SLACK = 0.005
"""A timeout this close to the deadline (seconds) was the deadline's doing: it ends the call."""


@dataclass(frozen=True)
class RetryPlan:
    """How one route of a call may be retried, and what it shares with the rest of the call."""

    policy: ThrottlePolicy
    deadline: Deadline | None
    clock: Clock
    budgets: tuple[BudgetTracker, ...] = ()
    limits: ProviderLimits | None = None


class FailedAttempt(NamedTuple):
    """One attempt that failed: which model (``prefix:model``), its attempt number there, and the error."""

    model: str
    attempt: int
    error: LLMError


class Retrier:
    """Decides, attempt by attempt, whether to send, wait, or give up; emits the events of each decision.

    ``runner`` is the route's ``Attempt`` (sends, classifies); ``attempt`` counts
    attempts on this route; ``sent`` adds the attempts earlier routes of the same
    call made (fallbacks), which is what errors and responses report.
    """

    __slots__ = (
        "_held",
        "_permit",
        "_where",
        "attempt",
        "attempts_before",
        "failures",
        "listening",
        "plan",
        "request",
        "request_id",
        "runner",
        "started",
        "telemetry",
        "waited",
    )

    def __init__(
        self,
        request_id: str,
        runner: Attempt,
        plan: RetryPlan,
        telemetry: Telemetry,
        attempts_before: int = 0,
        started: float | None = None,
        *,
        request: Request,
    ) -> None:
        self.request_id = request_id
        self.request = request
        self._held: list[Reservation] = []
        self._permit: Permit | None = None
        self.runner = runner
        self.plan = plan
        self.telemetry = telemetry
        self.attempts_before = attempts_before
        self.attempt = 0
        self.waited = 0.0
        self.started = plan.clock.monotonic() if started is None else started
        self.failures: list[FailedAttempt] = []
        self.listening = False  # whether an observer listened when the current attempt began
        self._where: Mapping[str, str] | None = None  # built when an event or error first needs it

    @property
    def sent(self) -> int:
        """Attempts begun in this call so far, earlier routes included."""
        return self.attempts_before + self.attempt

    def where(self) -> Mapping[str, str]:
        """The fields every event of this request carries (built once per route, when first needed)."""
        if self._where is None:
            route = self.runner.route
            self._where = {"request_id": self.request_id, "provider": route.provider.name, "model": route.model}
        return self._where

    def begin(self, stream: bool = False) -> None:
        """Start the next attempt: reserve it on the budgets (waiting for room while other requests
        hold it), wait for the provider's limits to admit it, or raise when out of time or budget."""
        self._check_deadline()
        self.settle(None)
        if self.plan.budgets:
            try:
                held = reserve(self.plan.budgets, self.request, self.plan.deadline, *self._route_names())
            except LLMError as error:
                raise self._budget_stop(error) from None
            self._keep(held)
        limits = self.plan.limits
        if limits is not None:
            try:
                self._permit = limits.admit(self.request, self.plan.deadline, self.plan.clock, self._limited)
            except LLMError as error:
                raise self._not_admitted(error) from None
            except BaseException:  # Ctrl-C while waiting for a slot or a window: never sent
                self._give_back()
                raise
        self._started(stream)

    @property
    def waits(self) -> bool:
        """Whether beginning an attempt may wait (for budget room or the provider's limits): else ``begin``
        does all that ``abegin`` would, without a coroutine."""
        return bool(self.plan.budgets) or self.plan.limits is not None

    async def abegin(self, stream: bool = False) -> None:
        """Async ``begin``: waiting for budget room or for the limits does not block the event loop."""
        self._check_deadline()
        self.settle(None)
        if self.plan.budgets:
            try:
                held = await areserve(self.plan.budgets, self.request, self.plan.deadline, *self._route_names())
            except LLMError as error:
                raise self._budget_stop(error) from None
            self._keep(held)
        limits = self.plan.limits
        if limits is not None:
            try:
                self._permit = await limits.aadmit(self.request, self.plan.deadline, self.plan.clock, self._limited)
            except LLMError as error:
                raise self._not_admitted(error) from None
            except BaseException:  # cancelled while waiting for a slot or a window: never sent
                self._give_back()
                raise
        self._started(stream)

    def settle(self, usage: Usage | None, reason: str = "the provider reported no usage") -> None:
        """End this attempt's budget reservations and limit permit with the usage it reported
        (``None``: failed, nothing spent). An unknown usage (``usage.reported`` false) counts each
        reservation instead, and a ``UsageUnknown`` event says why (``reason``) and what was counted."""
        if not self._held and self._permit is None:  # nothing held: the call without budgets or limits
            return
        held, self._held = self._held, []
        counted = [reservation.settle(usage) for reservation in held]
        if usage is not None and not usage.reported and held:
            charges = tuple(c._asdict() for c in counted if c is not None)
            self.telemetry.emit(UsageUnknown, attempt=self.attempt, reason=reason, counted=charges, **self.where())
        permit, self._permit = self._permit, None
        if permit is not None:
            permit.settle(usage)

    def _limited(self, delay: float, limit: str) -> None:
        """The provider's ``limit`` holds the next attempt back for ``delay`` seconds: say so."""
        self.telemetry.emit(Throttled, attempt=self.attempt + 1, delay=delay, reason=limit, **self.where())

    def _not_admitted(self, error: LLMError) -> LLMError:
        """The limits refused the attempt: it was never sent, so the budgets get it back."""
        self._give_back()
        error.model = error.model or self.runner.route.model
        return self._budget_stop(error)

    def _give_back(self) -> None:
        """Cancel this attempt's reservations: it was never sent (not counted as a request)."""
        held, self._held = self._held, []
        for reservation in held:
            reservation.cancel()

    def close(self) -> None:
        """Give back whatever is still reserved, unused: the call ended (returned, raised or was abandoned)."""
        self.settle(None)

    def cut_off(self, reported: Usage, why: str) -> None:
        """The answer of a sent attempt ended early (``why``): settle with what it reported so far, as unknown
        usage, so that the budgets count at least their reservations."""
        if self._held or self._permit is not None:
            self.settle(reported.model_copy(update={"reported": False}), f"{why} before its usage was complete")

    def _check_deadline(self) -> None:
        deadline = self.plan.deadline
        if deadline is not None and deadline.expired:
            raise self._stopped(self.deadline_error())

    def _route_names(self) -> tuple[str, str, str]:
        route = self.runner.route
        return route.provider.name, route.model, route.provider.info.name

    def _keep(self, held: list[Reservation] | None) -> None:
        if held is None:
            raise self._stopped(self.deadline_error())
        self._held = held

    def _budget_stop(self, error: LLMError) -> LLMError:
        error.attempts = self.sent
        return self._stopped(error)

    def _started(self, stream: bool) -> None:
        self.attempt += 1
        self.listening = listening = self.telemetry.listening()  # asked once: the attempt's events go by it
        if self.telemetry.wants(RequestStarted, listening):  # skips building the event's fields when nobody listens
            self.telemetry.emit(RequestStarted, attempt=self.attempt, stream=stream, **self.where())

    def deadline_error(self, cause: LLMError | None = None) -> LLMDeadlineExceededError:
        """The error of a call whose deadline passed (``cause``: the timeout it turned into)."""
        route = self.runner.route
        sent = self.sent
        where = "before the request could be sent" if cause is None and not sent else "before an answer arrived"
        return LLMDeadlineExceededError(
            f"deadline reached {where} ({sent} attempt{'s' if sent != 1 else ''} made)",
            provider=route.provider.name,
            model=route.model,
            attempts=sent,
            cause=cause,
        )

    def failure(self, exc: BaseException, may_retry: bool = True) -> tuple[LLMError, float | None]:
        """Classify ``exc``; return it with the wait before the next attempt, or ``None`` to stop."""
        deadline = self.plan.deadline
        if isinstance(exc, LLMDeadlineExceededError):
            error: LLMError = exc
        else:
            error = self.runner.classify(exc)
            if deadline is not None and isinstance(error, LLMTimeoutError) and deadline.remaining() <= DEADLINE_SLACK:
                error = self.deadline_error(cause=error)
        error.attempts = self.sent
        self.settle(None)
        self.failures.append(FailedAttempt(self.runner.route.spec, self.attempt, error))
        if not may_retry:
            error.context["gave_up"] = "the stream had already yielded events"
            return error, None
        decision = self.plan.policy.decide(
            error,
            self.attempt,
            self.waited,
            self.plan.clock.random(),
            deadline.remaining() if deadline is not None else None,
        )
        if decision.delay is None:
            error.context["gave_up"] = decision.reason
            return error, None
        self.waited += decision.delay
        if self.telemetry.wants(Throttled, self.listening):
            self.telemetry.emit(
                Throttled, attempt=self.attempt, delay=decision.delay, reason=type(error).__name__, **self.where()
            )
        return error, decision.delay

    def elapsed(self) -> float:
        """Seconds since the call began."""
        return self.plan.clock.monotonic() - self.started

    def _stopped(self, error: LLMError) -> LLMError:
        self.failures.append(FailedAttempt(self.runner.route.spec, self.attempt + 1, error))
        return error
