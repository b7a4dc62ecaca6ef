"""The attempts of one call on a model group: each goes to the deployment the group picks.

A deployment's attempt is a one-attempt ``Pipeline``; its retryable failure is
retried on another deployment (one this call has not tried, while any is
left), at once, under the group's retry policy (``[throttle]``, or
``[throttle.providers.<group>]``) and the call's deadline and budgets. Going
back to a deployment already tried waits as the policy says. Every attempt's
end is told to the group's health board: a success clears the deployment's
failures in a row, a retryable failure counts one (and may cool it), anything
else (a refusal, a bad request, a cancelled call) counts for neither.
"""

from __future__ import annotations

from collections.abc import Callable

from llmplex.engine.pipeline import Pipeline
from llmplex.engine.retrier import RetryPlan
from llmplex.errors import LLMDeadlineExceededError, LLMError, LLMGroupUnavailableError
from llmplex.reliability.guard import in_worker
from llmplex.reliability.throttle import ThrottlePolicy
from llmplex.routing import Deployment, Group, Route
from llmplex.routing.health import Outcome
from llmplex.types import Request

__all__ = ["GroupTries"]


class GroupTries:
    """Picks the deployment of each attempt of one call on ``group`` and keeps the group's health told."""

    def __init__(
        self,
        group: Group,
        policy: ThrottlePolicy,
        request: Request,
        plan: RetryPlan,
        opened: Callable[[Route], Pipeline],
    ) -> None:
        self.group = group
        self.policy = policy
        self.request = request
        self.plan = plan
        self._open = opened
        self.tried: list[Deployment] = []
        self.current: Deployment | None = None
        self.began = 0.0
        self.attempts = 0
        self.waited = 0.0

    def pick(self) -> Pipeline:
        """The pipeline of the next attempt, on the deployment the group picks now."""
        deployment = self.group.pick(self.request, self.tried, self.plan.deadline, self.plan.clock.random)
        return self._opened(deployment)

    async def apick(self) -> Pipeline:
        """Async ``pick``: a look at a shared (Redis) board runs on a worker thread, not on the loop."""
        if not self.group.does_io:
            return self.pick()
        args = (self.request, list(self.tried), self.plan.deadline, self.plan.clock.random)
        deployment = await in_worker(lambda: self.group.pick(*args))
        return self._opened(deployment)

    def _opened(self, deployment: Deployment) -> Pipeline:
        self.tried.append(deployment)
        self.current = deployment
        self.began = self.plan.clock.monotonic()
        self.attempts += 1
        self.group.started(deployment)
        return self._open(self.group.route(deployment))

    def end(self, outcome: Outcome, error: LLMError | None = None) -> None:
        """The current attempt ended (no-op when it was told already)."""
        deployment, self.current = self.current, None
        if deployment is None:
            return
        latency = self.plan.clock.monotonic() - self.began if outcome == "ok" else None
        asked = getattr(error, "retry_after", None) if error is not None else None
        self.group.ended(deployment, outcome, latency, asked)

    def failed(self, error: LLMError) -> float | None:
        """The current attempt failed with ``error``: the wait before the next one here, or ``None`` to stop."""
        if isinstance(error, LLMGroupUnavailableError):
            return None
        retryable = error.retryable and not isinstance(error, LLMDeadlineExceededError)
        self.end("failed" if retryable and error.context.get("limit") is None else "neutral", error)
        deadline = self.plan.deadline
        clock = self.plan.clock
        remaining = deadline.remaining() if deadline is not None else None
        decision = self.policy.decide(error, self.attempts, self.waited, clock.random(), remaining)
        if decision.delay is None:
            error.context["gave_up"] = decision.reason
            return None
        if len({d.key for d in self.tried}) < len(self.group.deployments):
            return 0.0  # another deployment is waiting: no reason to back off
        self.waited += decision.delay
        return decision.delay
