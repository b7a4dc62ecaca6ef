"""``embed`` on a model group: the whole request goes to the deployment the group picks, and a retryable
failure moves it to another, as for chat calls (``llmplex.engine.group_tries``).

Each deployment gets one try (its ``EmbedRun`` with a one-attempt plan); the
group's retry policy decides whether another follows, at once while a
deployment this call has not tried is left, else after the policy's wait.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from llmplex.engine.embedding import EmbedRun
from llmplex.engine.retrier import RetryPlan
from llmplex.engine.telemetry import Telemetry
from llmplex.errors import LLMDeadlineExceededError, LLMError
from llmplex.reliability.guard import in_worker
from llmplex.reliability.rate_limits import ProviderLimits
from llmplex.routing import Deployment, Group, Route
from llmplex.types import Embeddings, LLMConfig, Message, Request

__all__ = ["GroupEmbedRun", "embedding_run"]


def embedding_run(
    request_id: str,
    route: Route,
    texts: list[str],
    plan: RetryPlan,
    telemetry: Telemetry,
    args: Mapping[str, Any],
    limits: Callable[[str], ProviderLimits | None],
) -> EmbedRun | GroupEmbedRun:
    """The run of one ``embed`` call: on ``route``, or on the deployments of its group (``args``: the call's
    ``dimensions`` and ``batch_size``; ``limits``: a provider instance's own limits, by prefix)."""
    dimensions, size = args.get("dimensions"), args.get("batch_size")

    def run_on(on: Route, plan: RetryPlan) -> EmbedRun:
        return EmbedRun(request_id, on, texts, plan, telemetry, dimensions=dimensions, batch_size=size)

    if route.group is not None:
        return GroupEmbedRun(route.group, texts, plan, run_on, limits)
    return run_on(route, plan)


class GroupEmbedRun:
    """Embeds ``texts`` on one deployment of ``group`` after another until one answers."""

    def __init__(
        self,
        group: Group,
        texts: list[str],
        plan: RetryPlan,
        run_on: Callable[[Route, RetryPlan], EmbedRun],
        limits: Callable[[str], ProviderLimits | None],
    ) -> None:
        self.group = group
        self.plan = plan
        self._run_on = run_on
        self._limits = limits
        self._single = plan.policy.replace({"max_attempts": 1})
        # what the group's rpm/tpm windows count: the texts, as one prompt
        self.request = Request(
            model=group.name, messages=(Message(role="user", content="\n".join(texts)),), config=LLMConfig(max_tokens=1)
        )
        self.tried: list[Deployment] = []
        self.attempts = 0
        self.waited = 0.0

    def _pick(self) -> Deployment:
        """The next deployment (a first attempt leaves the group's ``hedge_reserve`` for retries)."""
        first = not self.tried
        return self.group.pick(self.request, list(self.tried), self.plan.deadline, self.plan.clock.random, first=first)

    def _start(self, deployment: Deployment) -> tuple[EmbedRun, float]:
        """The deployment's one-attempt run (its provider's own limits apply), counting on from this call's."""
        self.tried.append(deployment)
        self.group.started(deployment)
        route, plan = self.group.route(deployment), self.plan
        limits = self._limits(route.provider.name)
        run = self._run_on(route, RetryPlan(self._single, plan.deadline, plan.clock, plan.budgets, limits))
        run.attempts = self.attempts
        return run, plan.clock.monotonic()

    def _failed(self, deployment: Deployment, run: EmbedRun, error: LLMError) -> float | None:
        """Tell the group; the wait before the next deployment, or ``None`` to raise ``error``."""
        self.attempts = max(self.attempts + 1, run.attempts)
        retryable = error.retryable and not isinstance(error, LLMDeadlineExceededError)
        self.group.ended(deployment, "failed" if retryable else "neutral", None, getattr(error, "retry_after", None))
        deadline = self.plan.deadline
        remaining = deadline.remaining() if deadline is not None else None
        decision = self.plan.policy.decide(error, self.attempts, self.waited, self.plan.clock.random(), remaining)
        if decision.delay is None:
            error.attempts = self.attempts
            return None
        if len({d.key for d in self.tried}) < len(self.group.deployments):
            return 0.0
        self.waited += decision.delay
        return decision.delay

    def run(self) -> Embeddings:
        """The vectors, synchronously."""
        while True:
            deployment = self._pick()
            run, began = self._start(deployment)
            try:
                result = run.run()
            except LLMError as error:
                delay = self._failed(deployment, run, error)
                if delay is None:
                    raise
                self.plan.clock.sleep(delay)
                continue
            except BaseException:
                self.group.ended(deployment, "neutral", None, None)
                raise
            self.group.ended(deployment, "ok", self.plan.clock.monotonic() - began, None)
            return result

    async def arun(self) -> Embeddings:
        """The vectors; a look at a shared (Redis) health board runs on a worker thread."""
        while True:
            deployment = await in_worker(self._pick) if self.group.does_io else self._pick()
            run, began = self._start(deployment)
            try:
                result = await run.arun()
            except LLMError as error:
                delay = self._failed(deployment, run, error)
                if delay is None:
                    raise
                await self.plan.clock.asleep(delay)
                continue
            except BaseException:
                self.group.ended(deployment, "neutral", None, None)
                raise
            self.group.ended(deployment, "ok", self.plan.clock.monotonic() - began, None)
            return result
