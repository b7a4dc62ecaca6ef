"""Hedged requests: no first byte from one deployment after ``hedge`` seconds, and another one is asked too.

The first attempt to answer (a whole response, or a stream's first event) wins;
the others are cancelled: their tasks are cancelled, which closes their
connections and abandons their streams, and their pipelines are closed, so
their budget reservations are given back. A hedge starts only while another
deployment this call has not tried is usable (``Group.pick`` with
``fresh_only``), and never after the call's deadline; when none is, the race
keeps watching and hedges as soon as one comes back (a cooldown ends, an
rpm/tpm window frees), still only before the deadline. An attempt that fails
while another is still running is counted and the race goes on; when every
one has failed, the last error goes on to the call's usual retry (another
deployment) or fallback. A hedge that fails while the first request still
runs is replaced by another (attempts and time allowing), so a slow first
request keeps a second one beside it.

The ``Hedged`` event names the group, the deployment hedged to, whether the
hedge won, and the usage the loser reported (its hedge cost: normally none, it
was cancelled before answering).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

from llmplex.engine.bridge import run_on_loop
from llmplex.engine.group_tries import GroupTries
from llmplex.engine.pipeline import Pipeline
from llmplex.engine.telemetry import Telemetry
from llmplex.errors import LLMError, LLMGroupUnavailableError
from llmplex.events import Hedged
from llmplex.types import Response, StreamEvent, Usage

__all__ = ["first_event", "on_bridge", "race"]

T = TypeVar("T")

LOOK_AGAIN = 0.01
"""The shortest wait before a race that found no deployment to hedge to looks again."""


async def race(
    tries: GroupTries,
    first: Pipeline,
    run: Callable[[Pipeline], Awaitable[T]],
    failed: Callable[[Pipeline, LLMError, bool], None],
    telemetry: Telemetry,
) -> tuple[Pipeline, T]:
    """``run(first)``, hedged to another deployment after ``tries.hedge`` seconds without a result; the winning
    pipeline and its result. ``failed(pipeline, error, last)`` is told of each attempt that fails (``last``: no
    other runs any more, and ``error`` is raised next)."""
    hedge = tries.hedge
    assert hedge is not None
    deadline = tries.plan.deadline
    loop = asyncio.get_running_loop()
    tasks: dict[asyncio.Future[T], Pipeline] = {asyncio.ensure_future(run(first)): first}
    hedged: Pipeline | None = None
    due: float | None = loop.time() + hedge  # when to look for a hedge (None: none wanted)
    try:
        while True:
            wait = None if due is None else max(0.0, due - loop.time())
            if wait is not None and deadline is not None:
                wait = min(wait, deadline.remaining())
            done, _ = await asyncio.wait(tasks, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
            if not done:
                due = None
                if deadline is None or not deadline.expired:
                    found, due = await _hedge(tries, run, tasks, loop.time())
                    hedged = found or hedged
                continue
            for task in done:
                pipeline = tasks.pop(task)
                error = task.exception()
                if error is None:
                    _settled(tries, telemetry, pipeline, hedged, first, hedge, tasks)
                    tries.current = pipeline
                    return pipeline, task.result()
                last = not tasks or not isinstance(error, LLMError)
                if isinstance(error, LLMError):
                    failed(pipeline, error, last)
                    if not last and _may_hedge_again(tries, error):  # keep a second request in flight
                        found, due = await _hedge(tries, run, tasks, loop.time())
                        hedged = found or hedged
                if last:
                    _settled(tries, telemetry, pipeline, hedged, first, hedge, tasks)
                    raise error
    finally:
        for task, pipeline in tasks.items():
            task.cancel()
            with contextlib.suppress(BaseException):
                result = await task
                closing = getattr(result[0], "aclose", None) if isinstance(result, tuple) else None
                if closing is not None:  # a losing stream that had begun to answer: abandoned here
                    await closing()
            pipeline.close()
            tries.end("neutral", pipeline=pipeline, lost_race=True)


def _may_hedge_again(tries: GroupTries, error: LLMError) -> bool:
    """Whether a failed attempt of a race may be replaced by another hedge: a retryable failure, attempts and
    time left."""
    deadline = tries.plan.deadline
    in_time = deadline is None or not deadline.expired
    return error.retryable and in_time and tries.attempts < tries.policy.max_attempts


async def _hedge(
    tries: GroupTries,
    run: Callable[[Pipeline], Awaitable[T]],
    tasks: dict[asyncio.Future[T], Pipeline],
    now: float,
) -> tuple[Pipeline | None, float | None]:
    """The hedge started (its task added to ``tasks``), no further look due; or, when no other deployment is
    usable now, no hedge and when to look again: as the first one not tried comes back (its cooldown ends, its
    window frees), or never (``None``) when none is left."""
    try:
        pipeline = await tries.apick(fresh_only=True)
    except LLMGroupUnavailableError as error:
        back = error.retry_after or 0.0
        return None, (now + max(back, LOOK_AGAIN) if back > 0 else None)
    tasks[asyncio.ensure_future(run(pipeline))] = pipeline
    return pipeline, None


def _settled(
    tries: GroupTries,
    telemetry: Telemetry,
    winner: Pipeline,
    hedged: Pipeline | None,
    first: Pipeline,
    hedge: float,
    losers: dict[asyncio.Future[Any], Pipeline],
) -> None:
    if hedged is None:
        return
    lost = [first if winner is hedged else hedged]
    cost = sum((_reported(task) for task in losers if losers[task] in lost), Usage())
    telemetry.emit(
        Hedged,
        attempt=tries.attempts,
        group=tries.group.name,
        hedge=tries.spec(hedged),
        delay=hedge,
        won=winner is hedged,
        hedge_usage=cost,
        **winner.retrier.where(),
    )


def _reported(task: asyncio.Future[Any]) -> Usage:
    """What a losing attempt that answered anyway reported (nothing when it was still waiting)."""
    if not task.done() or task.cancelled() or task.exception() is not None:
        return Usage()
    result = task.result()
    response = result if isinstance(result, Response) else getattr(result[1], "response", None)
    return response.usage if isinstance(response, Response) else Usage()


async def first_event(pipeline: Pipeline) -> tuple[AsyncIterator[StreamEvent], StreamEvent]:
    """``pipeline``'s stream, opened, with its first event (what a hedged stream races for)."""
    events = pipeline.astream()
    try:
        return events, await anext(events)
    except BaseException:
        closing: Any = events
        with contextlib.suppress(BaseException):
            await closing.aclose()
        raise


def on_bridge(events: AsyncIterator[StreamEvent]) -> Iterator[StreamEvent]:
    """A hedged stream's events for sync code: read on the bridge loop, and closed there when the reader stops
    (its connection with it)."""
    try:
        while (event := run_on_loop(lambda: anext(events, None))) is not None:
            yield event
    finally:
        closing: Any = events
        run_on_loop(closing.aclose)
