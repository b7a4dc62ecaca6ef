"""Per-request retry bookkeeping shared by the sync and async loops."""

from __future__ import annotations

from dataclasses import dataclass

from llmplex.engine.attempt import Attempt
from llmplex.engine.telemetry import Telemetry
from llmplex.errors import LLMDeadlineExceededError, LLMError
from llmplex.events import RequestFailed, RequestStarted, Throttled
from llmplex.reliability.clock import Clock
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.throttle import ThrottlePolicy

__all__ = ["Retrier", "RetryPlan"]


@dataclass(frozen=True)
class RetryPlan:
    """How one request may be retried."""

    policy: ThrottlePolicy
    deadline: Deadline | None
    clock: Clock


class Retrier:
    """Decides, attempt by attempt, whether to send, wait, or give up; emits the events."""

    def __init__(self, request_id: str, attempt: Attempt, plan: RetryPlan, telemetry: Telemetry) -> None:
        self.request_id = request_id
        self.attempt_runner = attempt
        self.plan = plan
        self.telemetry = telemetry
        self.attempt = 0
        self.waited = 0.0
        self.started = plan.clock.monotonic()

    def where(self) -> dict[str, str]:
        route = self.attempt_runner.route
        return {"request_id": self.request_id, "provider": route.provider.name, "model": route.model}

    def begin(self, stream: bool = False) -> float | None:
        """Start the next attempt; return the SDK timeout (seconds left) or raise when out of time."""
        self.attempt += 1
        deadline = self.plan.deadline
        if deadline is not None and deadline.expired:
            route = self.attempt_runner.route
            error = LLMDeadlineExceededError(
                "deadline reached before the request could be sent",
                provider=route.provider.name,
                model=route.model,
                attempts=self.attempt - 1,
            )
            self._failed(error)
            raise error
        self.telemetry.emit(RequestStarted, attempt=self.attempt, stream=stream, **self.where())
        return deadline.remaining() if deadline is not None else None

    def failure(self, exc: BaseException) -> tuple[LLMError, float | None]:
        """Classify ``exc``; return it with the wait before the next attempt, or ``None`` to stop."""
        error = self.attempt_runner.classify(exc)
        error.attempts = self.attempt
        delay = self.plan.policy.delay(error, self.attempt, self.waited, self.plan.clock.random())
        deadline = self.plan.deadline
        if delay is not None and deadline is not None and delay >= deadline.remaining():
            delay = None
        if delay is None:
            self._failed(error)
            return error, None
        self.waited += delay
        self.telemetry.emit(Throttled, attempt=self.attempt, delay=delay, reason=type(error).__name__, **self.where())
        return error, delay

    def elapsed(self) -> float:
        """Seconds since the first attempt began."""
        return self.plan.clock.monotonic() - self.started

    def _failed(self, error: LLMError) -> None:
        self.telemetry.emit(
            RequestFailed,
            attempt=self.attempt,
            error_type=type(error).__name__,
            message=error.message,
            retryable=error.retryable,
            **self.where(),
        )
