"""One call from start to end: the primary model with its retries, then its fallbacks in order.

Fallbacks come from ``fallbacks=`` on the call (a list of models for this
call, or a table like the config's) or else from the config's ``fallbacks``
table, keyed by the model as written or as routed (``"openai:gpt-4o"``). A
fallback is tried only once the model before it gave up on a retryable error
(rate limit, overload, timeout, connection), never after a bad request, a
refusal, quota exhaustion, a spent budget, the deadline, or a stream that has
already yielded events. Every model shares the call's deadline and budgets
and gets its own retries under its provider's throttle policy.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping, Sequence
from typing import Any

from llmplex.config.schema import Config
from llmplex.engine.bridge import run_on_loop
from llmplex.engine.call_args import CallArgs
from llmplex.engine.group_tries import GroupTries
from llmplex.engine.hedging import first_event, on_bridge, race
from llmplex.engine.pipeline import Pipeline
from llmplex.engine.retrier import FailedAttempt, RetryPlan
from llmplex.engine.telemetry import Telemetry
from llmplex.errors import LLMConfigurationError, LLMError, LLMGroupUnavailableError
from llmplex.events import CallEnded, FallbackUsed, RequestFailed
from llmplex.reliability.budget import Budget, BudgetTracker, as_tracker
from llmplex.reliability.clock import Clock
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.rate_limits import ProviderLimits
from llmplex.reliability.storage import MEMORY, store_for
from llmplex.reliability.throttle import ThrottlePolicy
from llmplex.routing import Group, Route, Router
from llmplex.types import Request, Response, StreamEvent, Usage

__all__ = ["Call", "CallPlanner"]

ThrottleInput = ThrottlePolicy | Mapping[str, Any] | None
BudgetInput = Budget | BudgetTracker | Mapping[str, int | None] | None
FallbacksInput = Sequence[str] | Mapping[str, Sequence[str]] | None


class CallPlanner:
    """What a Client shares across its calls: throttle policies per provider, its budget, fallbacks."""

    def __init__(
        self, config: Config, router: Router, telemetry: Telemetry, clock: Clock, budget: BudgetInput = None
    ) -> None:
        self.config = config
        self.router = router
        self.telemetry = telemetry
        self.clock = clock
        if budget is None and config.budget is not None:
            budget = Budget.from_config(config.budget)
        self.budget = self._shared(budget) or as_tracker(budget)
        self._budgets: tuple[BudgetTracker, ...] = () if self.budget is None else (self.budget,)
        self._policies: dict[str, ThrottlePolicy] = {}
        self._plain_plans: dict[str, RetryPlan] = {}
        self._limits: dict[str, ProviderLimits | None] = {}

    def _shared(self, budget: BudgetInput) -> BudgetTracker | None:
        """The client's budget kept in the ``[limits]`` storage, when that is shared (Redis)."""
        if (
            self.config.limits.storage.get_secret_value() == MEMORY
            or budget is None
            or isinstance(budget, BudgetTracker)
        ):
            return None
        from llmplex.reliability.shared_budget import SharedBudgetTracker

        tracker = as_tracker(budget)
        assert tracker is not None
        name = self.config.budget.name if self.config.budget is not None else "default"
        return SharedBudgetTracker(tracker.budget, storage=store_for(self.config.limits), name=name)

    def limits(self, prefix: str) -> ProviderLimits | None:
        """The limits of provider instance ``prefix`` (its table's ``rate_limit``, ``token_rate_limit``,
        ``max_concurrency``), built once."""
        if prefix not in self._limits:
            table = self.config.providers.get(prefix, {})
            self._limits[prefix] = ProviderLimits.from_table(prefix, table, store_for(self.config.limits))
        return self._limits[prefix]

    def policy(self, prefix: str, throttle: ThrottleInput = None) -> ThrottlePolicy:
        """The retry policy for provider ``prefix``, with a call's ``throttle=`` applied."""
        if isinstance(throttle, ThrottlePolicy):
            return throttle
        policy = self._policies.get(prefix)
        if policy is None:
            policy = self._policies[prefix] = ThrottlePolicy.from_config(self.config.throttle, prefix)
        if throttle is None:
            return policy
        if not isinstance(throttle, Mapping):
            raise LLMConfigurationError(
                f"throttle must be a ThrottlePolicy or a mapping such as {{'max_attempts': 2}}, "
                f"got {type(throttle).__name__}"
            )
        return policy.replace(throttle)

    def start(
        self, request_id: str, model: str, route: Route, request: Request, deadline: Deadline | None, args: CallArgs
    ) -> Call:
        """The call of ``request`` (routed to ``route`` from ``model`` as written), ready to run."""
        plan = self.plan(route, deadline, args)
        throttle: ThrottleInput = args.get("throttle")
        chain = self._fallbacks(model, route, args.get("fallbacks"))
        return Call(self, request_id, route, request, plan, throttle, chain, asked=model)

    def plan(self, route: Route, deadline: Deadline | None, args: CallArgs) -> RetryPlan:
        """How a call to ``route`` retries: its provider's policy with the call's throttle, deadline and budgets."""
        throttle: ThrottleInput = args.get("throttle")
        if deadline is None and throttle is None and args.get("budget") is None:
            return self._plain_plan(route.provider.name)
        prefix = route.provider.name
        return RetryPlan(self.policy(prefix, throttle), deadline, self.clock, self._trackers(args), self.limits(prefix))

    def _plain_plan(self, prefix: str) -> RetryPlan:
        """The plan of every call to ``prefix`` with no deadline, throttle or budget of its own (built once)."""
        plan = self._plain_plans.get(prefix)
        if plan is None:
            plan = RetryPlan(self.policy(prefix), None, self.clock, self._budgets, self.limits(prefix))
            self._plain_plans[prefix] = plan
        return plan

    def _trackers(self, args: CallArgs) -> tuple[BudgetTracker, ...]:
        tracker = as_tracker(args.get("budget"))
        if tracker is None or tracker is self.budget:
            return self._budgets
        return (*self._budgets, tracker)

    def _fallbacks(self, model: str, route: Route, given: FallbacksInput) -> tuple[str, ...]:
        table: Mapping[str, Sequence[str]] = self.config.fallbacks
        if isinstance(given, Mapping):
            table = given
        elif given is not None:
            return _model_names(given, "fallbacks")
        if not table:
            return ()
        chain = table.get(model) or table.get(route.spec)
        return () if chain is None else _model_names(chain, f"fallbacks[{model!r}]")


class Call:
    """Runs one call to a Response, or raises the last model's error carrying every attempt's error.

    However a model's attempt ends — an answer, an error, a cancelled task or an abandoned
    stream — what it reserved on the budgets is settled before the call moves on.

    The raised error's ``attempts`` counts every attempt of the call, across
    fallbacks, and ``context["errors"]`` lists each failed attempt as a
    ``FailedAttempt`` (model, attempt, error). A model group (the model asked, or a
    fallback) sends each attempt to the deployment it picks (``GroupTries``).
    """

    def __init__(
        self,
        planner: CallPlanner,
        request_id: str,
        route: Route,
        request: Request,
        plan: RetryPlan,
        throttle: ThrottleInput,
        fallbacks: tuple[str, ...],
        *,
        asked: str = "",
    ) -> None:
        self.planner = planner
        self.asked = asked
        self.request = request
        self.plan = plan
        self.throttle = throttle
        self.fallbacks = fallbacks
        self.pipeline = Pipeline(request_id, route, request, plan, planner.telemetry)
        self.tries: GroupTries | None = None
        self._pick = False  # the next attempt goes to the deployment the group picks
        if route.group is not None:
            self._on_group(route.group)
        self._next_fallback = 0
        self._failures: list[FailedAttempt] = []

    def where(self) -> Mapping[str, str]:
        """The fields every event of this call carries, for the model answering now."""
        return self.pipeline.retrier.where()

    def reported_so_far(self) -> Usage | None:
        """The usage the model answering this call's stream now reported so far (``Pipeline.reported_so_far``)."""
        return self.pipeline.reported_so_far()

    def _on_group(self, group: Group) -> None:
        policy = self.planner.policy(group.name, self.throttle)
        telemetry = self.planner.telemetry
        self.tries = GroupTries(group, policy, self.request, self.plan, self.deployment_pipeline, telemetry)
        self._pick = True

    def _hedges(self) -> bool:
        return self.tries is not None and self.tries.hedge is not None

    def _lost(self, pipeline: Pipeline, error: LLMError, last: bool) -> None:
        """An attempt of a hedged race failed: the last one goes on to ``_fall_back``; the others are counted."""
        assert self.tries is not None
        if last:
            self.pipeline = self.tries.current = pipeline
            return
        self._failures.extend(pipeline.retrier.failures)
        self.tries.lost(error, pipeline)

    async def _race_complete(self, pipeline: Pipeline) -> Response:
        assert self.tries is not None
        run = Pipeline.acomplete
        self.pipeline, response = await race(self.tries, pipeline, run, self._lost, self.planner.telemetry)
        return response

    async def _race_stream(self, pipeline: Pipeline) -> AsyncIterator[StreamEvent]:
        assert self.tries is not None
        found = await race(self.tries, pipeline, first_event, self._lost, self.planner.telemetry)
        self.pipeline, (events, first) = found
        return _continued(first, events)

    def deployment_pipeline(self, route: Route) -> Pipeline:
        """A one-attempt pipeline to one deployment of a group, continuing this call's count and clock."""
        retrier = self.pipeline.retrier
        assert self.tries is not None
        policy = self.tries.policy.replace({"max_attempts": 1})
        limits = self.planner.limits(route.provider.name)
        plan = RetryPlan(policy, self.plan.deadline, self.plan.clock, self.plan.budgets, limits)
        request = self.request.model_copy(update={"model": route.model})
        telemetry = self.planner.telemetry
        self.pipeline = Pipeline(retrier.request_id, route, request, plan, telemetry, retrier.sent, retrier.started)
        return self.pipeline

    def _next(self) -> Pipeline:
        if self._pick:
            assert self.tries is not None
            self._pick = False
            return self.tries.pick()
        return self.pipeline

    async def _apick(self) -> Pipeline:
        """Async ``_next`` when the group is to pick the deployment (``_pick``)."""
        assert self.tries is not None
        self._pick = False
        return await self.tries.apick()

    def _answered(self) -> None:
        if self.tries is not None:
            self.tries.end("ok")

    def released(self, pipeline: Pipeline | None) -> None:
        """The call is done with ``pipeline``: its route released, and a group's tries still open ended as neutral."""
        if pipeline is not None:
            pipeline.close()
        if self.tries is not None:
            self.tries.end_all("neutral")

    def complete(self) -> Response:
        """The answer of the first model that gives one (a hedged group's race runs on the bridge loop)."""
        if self._hedges():
            return run_on_loop(self.acomplete)
        while True:
            pipeline = None
            try:
                pipeline = self._next()
                response = pipeline.complete()
                self._answered()
                return self.ended(response)
            except LLMError as error:
                delay = self._fall_back(error)
            finally:
                self.released(pipeline)
            if delay:
                self.plan.clock.sleep(delay)

    def acomplete(self) -> Awaitable[Response]:
        """Async twin of ``complete``. A call to one model with no group and nothing to fall back to is its
        pipeline's own coroutine, which ends the call as ``_acomplete`` would (one coroutine frame fewer while
        the call is in flight)."""
        if self.tries is None and not self.fallbacks:
            return self.pipeline.acomplete(self)
        return self._acomplete()

    async def _acomplete(self) -> Response:
        while True:
            pipeline = None
            try:
                pipeline = await self._apick() if self._pick else self.pipeline
                if self._hedges():
                    response = await self._race_complete(pipeline)
                else:
                    response = await pipeline.acomplete()
                self._answered()
                return self.ended(response)
            except LLMError as error:
                delay = self._fall_back(error)
            finally:
                self.released(pipeline)
            if delay:
                await self.plan.clock.asleep(delay)

    def stream(self) -> Iterator[StreamEvent]:
        """Stream events; a model (or deployment) that fails before its first event hands over to the next. A call
        to one model with no group and nothing to fall back to is its pipeline's own stream (as ``astream``)."""
        if self.tries is None and not self.fallbacks:
            return self.pipeline.stream(self)
        return self._stream()

    def _stream(self) -> Iterator[StreamEvent]:
        if self._hedges():
            yield from on_bridge(self.astream())
            return
        while True:
            yielded = False
            pipeline = None
            try:
                pipeline = self._next()
                for event in pipeline.stream():
                    if not yielded:
                        yielded = True
                        self._answered()
                    if event.response is not None:
                        self.ended(event.response)
                    yield event
                return
            except LLMError as error:
                delay = self._fall_back(error, partial=yielded)
            finally:
                self.released(pipeline)
            if delay:
                self.plan.clock.sleep(delay)

    def astream(self) -> AsyncIterator[StreamEvent]:
        """Async twin of ``stream``. A call to one model with no group and nothing to fall back to is its
        pipeline's own stream, which ends the call as ``_astream`` would (one generator layer fewer per event)."""
        if self.tries is None and not self.fallbacks:
            return self.pipeline.astream(self)
        return self._astream()

    async def _astream(self) -> AsyncIterator[StreamEvent]:
        while True:
            yielded = False
            pipeline = None
            try:
                pipeline = await self._apick() if self._pick else self.pipeline
                events = await self._race_stream(pipeline) if self._hedges() else pipeline.astream()
                async for event in events:
                    if not yielded:
                        yielded = True
                        self._answered()
                    if event.response is not None:
                        self.ended(event.response)
                    yield event
                return
            except LLMError as error:
                delay = self._fall_back(error, partial=yielded)
            finally:
                self.released(pipeline)
            if delay:
                await self.plan.clock.asleep(delay)

    def _fall_back(self, error: LLMError, partial: bool = False) -> float:
        """Move on to another deployment of the group (returning the wait before it), or to the next fallback
        (0), or raise ``error`` for good."""
        failed = self.pipeline
        self._record(error)
        deadline = self.plan.deadline
        expired = deadline is not None and deadline.expired
        if self.tries is not None and not partial:
            delay = self.tries.failed(error)
            if delay is not None and not expired:
                self._pick = True
                return delay
        if partial or not error.retryable or self._next_fallback >= len(self.fallbacks) or expired:
            raise self._final(error)
        spec = self.fallbacks[self._next_fallback]
        self._next_fallback += 1
        try:
            route = self.planner.router.resolve(spec)
            prefix = route.provider.name
            plan = RetryPlan(
                self.planner.policy(prefix, self.throttle),
                deadline,
                self.plan.clock,
                self.plan.budgets,
                self.planner.limits(prefix),
            )
        except LLMConfigurationError as problem:
            unusable = LLMConfigurationError(
                f"fallback {spec!r} of {failed.route.spec!r} cannot be used: {problem.message}",
                attempts=failed.retrier.sent,
                cause=problem,
            )
            self._failures.append(FailedAttempt(spec, 0, unusable))
            raise self._final(unusable) from error
        retrier = failed.retrier
        self.pipeline = Pipeline(
            retrier.request_id,
            route,
            self.request.model_copy(update={"model": route.model}),
            plan,
            self.planner.telemetry,
            retrier.sent,
            retrier.started,
        )
        self.tries = None
        if route.group is not None:
            self._on_group(route.group)
        self.planner.telemetry.emit(
            FallbackUsed,
            attempt=retrier.sent,
            failed_model=failed.route.spec,
            error_type=type(error).__name__,
            message=error.message,
            **self.where(),
        )
        return 0.0

    def _record(self, error: LLMError) -> None:
        """Keep the failed attempts of the model that gave up with ``error``."""
        if isinstance(error, LLMGroupUnavailableError):  # no attempt was made: the last pipeline was counted
            self._failures.append(FailedAttempt(error.group, 0, error))
        else:
            self._failures.extend(self.pipeline.retrier.failures)

    def gave_up(self, error: LLMError) -> LLMError:
        """The error a call with nothing to fall back to raises: ``error``, with every failed attempt
        (``_fall_back`` for such a call)."""
        self._record(error)
        return self._final(error)

    def ended(self, response: Response) -> Response:
        """Tell recorders (the call log) that the call answered; ``response`` passes through."""
        telemetry = self.planner.telemetry
        if telemetry.wants(CallEnded, self.pipeline.retrier.listening):  # a recorder listens: else nothing is built
            where = self.where()
            telemetry.emit(
                CallEnded,
                attempt=response.attempts,
                asked=self.asked,
                request=self.pipeline.request,
                response=response,
                latency=response.latency,
                **where,
            )
        return response

    def _final(self, error: LLMError) -> LLMError:
        retrier = self.pipeline.retrier
        error.attempts = max(error.attempts, retrier.sent)
        error.context["errors"] = list(self._failures)
        self.planner.telemetry.emit(
            RequestFailed,
            attempt=retrier.sent,
            error_type=type(error).__name__,
            message=error.message,
            retryable=error.retryable,
            gave_up=str(error.context.get("gave_up", "")),
            **retrier.where(),
        )
        if self.planner.telemetry.wants(CallEnded):
            self.planner.telemetry.emit(
                CallEnded,
                attempt=error.attempts,
                asked=self.asked,
                request=self.pipeline.request,
                status="error",
                error_type=type(error).__name__,
                latency=retrier.elapsed(),
                **retrier.where(),
            )
        return error


async def _continued(first: StreamEvent, events: AsyncIterator[StreamEvent]) -> AsyncIterator[StreamEvent]:
    """``first``, then the rest of ``events`` (closed when the reader stops)."""
    try:
        yield first
        async for event in events:
            yield event
    finally:
        closing: Any = events
        await closing.aclose()


def _model_names(chain: Any, what: str) -> tuple[str, ...]:
    if (
        isinstance(chain, str)
        or not isinstance(chain, Sequence)
        or not all(isinstance(m, str) and m.strip() for m in chain)
    ):
        raise LLMConfigurationError(
            f"{what} must be a list of model names such as ['anthropic:claude-sonnet-4-5'], got {chain!r:.80}"
        )
    return tuple(chain)
