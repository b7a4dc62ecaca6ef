"""The attempts of one call on a model group: each goes to the deployment the group picks.

A deployment's attempt is a one-attempt ``Pipeline``; its retryable failure is
retried on another deployment (one this call has not tried, while any is
left), at once, under the group's retry policy (``[throttle]``, or
``[throttle.providers.<group>]``) and the call's deadline and budgets. Going
back to a deployment already tried waits as the policy says. Every attempt's
end is told to the group's health board: a success clears the deployment's
failures in a row, a retryable failure counts one (and may cool it: a
``DeploymentCooled`` event says so), anything else (a refusal, a bad request,
a cancelled call, a lost hedge) counts for neither. A success's time feeds the
deployment's recent latency; so does a lost hedge race's, when longer (the
``latency`` strategy then sees the slowness a hedge hides).
"""

from __future__ import annotations

from collections.abc import Callable

from llmplex.engine.pipeline import Pipeline
from llmplex.engine.retrier import RetryPlan
from llmplex.engine.telemetry import Telemetry
from llmplex.errors import LLMDeadlineExceededError, LLMError, LLMGroupUnavailableError
from llmplex.events import DeploymentCooled, DeploymentFailed
from llmplex.reliability.guard import in_worker
from llmplex.reliability.throttle import ThrottlePolicy
from llmplex.routing import Deployment, Group, Route
from llmplex.routing.health import Outcome
from llmplex.types import Request

__all__ = ["GroupTries"]


class GroupTries:
    """Picks the deployment of each attempt of one call on ``group`` and keeps the group's health told.

    Several attempts may be in flight at once (a hedge): each is known by its pipeline.
    """

    def __init__(
        self,
        group: Group,
        policy: ThrottlePolicy,
        request: Request,
        plan: RetryPlan,
        opened: Callable[[Route], Pipeline],
        telemetry: Telemetry,
    ) -> None:
        self.group = group
        self.policy = policy
        self.request = request
        self.plan = plan
        self.telemetry = telemetry
        self._open = opened
        self.tried: list[Deployment] = []
        self.current: Pipeline | None = None
        self.running: dict[Pipeline, tuple[Deployment, float]] = {}
        self.attempts = 0
        self.waited = 0.0

    @property
    def hedge(self) -> float | None:
        """Seconds without a first byte before the request also goes to another deployment (``None``: never)."""
        return self.group.config.hedge

    def pick(self) -> Pipeline:
        """The pipeline of the next attempt, on the deployment the group picks now."""
        deadline, draw, first = self.plan.deadline, self.plan.clock.random, self.attempts == 0
        return self._opened(self.group.pick(self.request, self.tried, deadline, draw, first=first))

    async def apick(self, fresh_only: bool = False) -> Pipeline:
        """Async ``pick``: a look at a shared (Redis) board runs on a worker thread, not on the loop.
        ``fresh_only``: a deployment this call has not tried (a hedge), else ``LLMGroupUnavailableError``."""
        tried, deadline, draw, first = list(self.tried), self.plan.deadline, self.plan.clock.random, self.attempts == 0

        def pick() -> Deployment:
            return self.group.pick(self.request, tried, deadline, draw, fresh_only=fresh_only, first=first)

        return self._opened(await in_worker(pick) if self.group.does_io else pick())

    def _opened(self, deployment: Deployment) -> Pipeline:
        self.tried.append(deployment)
        self.attempts += 1
        self.group.started(deployment)
        pipeline = self.current = self._open(self.group.route(deployment))
        self.running[pipeline] = (deployment, self.plan.clock.monotonic())
        return pipeline

    def spec(self, pipeline: Pipeline) -> str:
        """The deployment ``pipeline`` sends to."""
        found = self.running.get(pipeline)
        return found[0].spec if found is not None else pipeline.route.spec

    def end(
        self, outcome: Outcome, error: LLMError | None = None, pipeline: Pipeline | None = None, lost_race: bool = False
    ) -> None:
        """An attempt (``pipeline``, by default the latest) ended (no-op when it was told already); ``lost_race``: it
        lost a hedge race, and the time it ran is a lower bound of its latency."""
        pipeline = pipeline or self.current
        found = self.running.pop(pipeline, None) if pipeline is not None else None
        if pipeline is None or found is None:
            return
        deployment, began = found
        latency = self.plan.clock.monotonic() - began if outcome == "ok" or lost_race else None
        asked = getattr(error, "retry_after", None) if error is not None else None
        cooled = self.group.ended(deployment, outcome, latency, asked)
        if cooled > 0:
            route = self.group.route(deployment)
            where = {"request_id": pipeline.retrier.request_id, "provider": route.provider.name, "model": route.model}
            self.telemetry.emit(DeploymentCooled, attempt=self.attempts, group=self.group.name, seconds=cooled, **where)

    def end_all(self, outcome: Outcome) -> None:
        """Every attempt still running ended (the call is over)."""
        for pipeline in list(self.running):
            self.end(outcome, pipeline=pipeline)

    def lost(self, error: LLMError, pipeline: Pipeline | None = None) -> None:
        """An attempt failed with ``error``: a retryable failure counts against its deployment (a limit of the
        provider instance, the deadline, a refused request do not)."""
        retryable = error.retryable and not isinstance(error, LLMDeadlineExceededError)
        failed = pipeline or self.current
        if failed is not None and failed in self.running and self.telemetry.wants(DeploymentFailed):
            self.telemetry.emit(
                DeploymentFailed,
                attempt=self.attempts,
                group=self.group.name,
                error_type=type(error).__name__,
                retryable=retryable,
                **failed.retrier.where(),
            )
        self.end("failed" if retryable and error.context.get("limit") is None else "neutral", error, pipeline)

    def failed(self, error: LLMError, pipeline: Pipeline | None = None) -> float | None:
        """An attempt failed with ``error``: the wait before the next one here, or ``None`` to stop."""
        if isinstance(error, LLMGroupUnavailableError):
            return None
        self.lost(error, pipeline)
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
