"""format → call → parse with retries, for one route: sync, async and streaming."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterator
from functools import lru_cache
from typing import Any, Protocol

from llmplex.engine.adapt import Adapted
from llmplex.engine.assembly import StreamAssembler
from llmplex.engine.attempt import Attempt
from llmplex.engine.contained import PASSING, aclose_stream, contained, plugin_aborted
from llmplex.engine.retrier import Retrier, RetryPlan
from llmplex.engine.telemetry import Telemetry
from llmplex.errors import LLMError, LLMServerError, LLMUsageError
from llmplex.events import Dropped, PromptExecuted, PromptRendered
from llmplex.masking.errors import scrub_error
from llmplex.masking.values import redact
from llmplex.plugins.hooks import ProviderHooks
from llmplex.routing import Route
from llmplex.types import Request, Response, StreamEvent, StreamState, Usage
from llmplex.types.pricing import priced_model
from llmplex.types.trusted import assembled

__all__ = ["Pipeline"]


class Pipeline:
    """Runs one request against one route, retrying what the policy allows.

    The deadline bounds every attempt: its remaining time is the SDK timeout,
    and the provider's I/O runs under its guard (``llmplex.reliability.guard``),
    so no wait, read or stalled stream passes it.
    """

    __slots__ = ("_adapted", "_assembler", "_state", "plan", "request", "retrier", "route", "runner", "telemetry")

    def __init__(
        self,
        request_id: str,
        route: Route,
        request: Request,
        plan: RetryPlan,
        telemetry: Telemetry,
        attempts_before: int = 0,
        started: float | None = None,
    ) -> None:
        self.runner = Attempt(route)
        self.route = route
        self.request = request
        self.plan = plan
        self.telemetry = telemetry
        self.retrier = Retrier(request_id, self.runner, plan, telemetry, attempts_before, started, request=request)
        self._adapted: Adapted | None = None
        self._assembler: StreamAssembler | None = None
        self._state: StreamState | None = None

    # -- shared steps --------------------------------------------------------------

    def _adapt(self) -> Adapted:
        """The request as the instance can honour it, worked out once (refusing raises before anything is sent);
        observers hear of what was left out."""
        if self._adapted is None:
            self._adapted = self.runner.adapt(self.request)
            if self._adapted.dropped and self.telemetry.wants(Dropped):
                self.telemetry.emit(
                    Dropped, attempt=self.retrier.attempt, dropped=self._adapted.dropped, **self.retrier.where()
                )
        return self._adapted

    @property
    def _sent_request(self) -> Request:
        return self._adapt().request

    def _render(self, sent: Request) -> dict[str, Any]:
        """The payload of ``sent`` (the request as adapted), told to observers."""
        payload = self.runner.format_adapted(sent)
        if self.telemetry.wants(PromptRendered, self.retrier.listening):
            self.telemetry.emit(
                PromptRendered, attempt=self.retrier.attempt, payload=redact(payload), **self.retrier.where()
            )
        return payload

    def _finish(self, response: Response) -> Response:
        """The plugin's ``response`` with where it came from and how long it took, accounted for."""
        where = {
            "provider": self.route.provider.name,
            "model": response.model or self.route.model,
            "attempts": 0 if response.cached else self.retrier.sent,
            "latency": self.retrier.elapsed(),
        }
        return self._account(response, where)

    def _account(self, response: Response, update: dict[str, Any] | None = None, *, priced: bool = False) -> Response:
        """Price ``response``'s usage (unless ``priced`` already), record it in the budgets (a cached answer spends
        nothing) and tell observers it arrived; ``update`` (fields to set first) goes into the one copy made."""
        update = {} if update is None else update
        if not priced:
            plugin = self.route.provider.info.name
            answered = update.get("model", response.model)
            usage = response.usage.priced(plugin, _priced_model(plugin, answered, self.route.model))
            if usage is not response.usage:
                update["usage"] = usage
        dropped = self._adapted.dropped if self._adapted is not None else ()
        if dropped and not response.cached:
            update["dropped"] = dropped
        if update:
            response = _copied(response, update)
        self.retrier.settle(Usage() if response.cached else response.usage)
        if self.telemetry.wants(PromptExecuted, self.retrier.listening):
            self.telemetry.emit(
                PromptExecuted,
                attempt=self.retrier.attempt,
                usage=response.usage,
                latency=response.latency,
                finish_reason=response.finish_reason,
                cached=response.cached,
                **self.retrier.where(),
            )
        return response

    # -- complete ------------------------------------------------------------------

    def complete(self) -> Response:
        """Run to a Response or raise the final LLMError."""
        error: BaseException  # what the caller gets: an LLMError, or a group that propagates
        while True:
            self.retrier.begin()
            try:
                sent = self._sent_request
                payload = self._render(sent)
                raw = self.runner.send(payload, sent, self.plan.deadline, self.retrier.deadline_error)
                return self._finish(self.runner.parse(raw, sent))
            except Exception as exc:
                error, delay = self.retrier.failure(exc)
            except BaseExceptionGroup as group:  # a group holding a BaseException propagates, its secrets masked
                error, delay = scrub_error(group), None
            if delay is None:
                raise error
            self.plan.clock.sleep(delay)

    async def acomplete(self, call: CallEnd | None = None) -> Response:
        """Async twin of ``complete``. Given the ``call`` it is the whole of (one model, no group, nothing to
        fall back to: ``Call.acomplete``), it also ends that call: the answer is told to its recorders, a
        failure raised as its error, and the route released whatever way the call ends."""
        error: BaseException  # what the caller gets: an LLMError, or a group that propagates
        retrier = self.retrier
        try:
            while True:
                if retrier.waits:
                    await retrier.abegin()
                else:
                    retrier.begin()
                try:
                    sent = self._sent_request
                    payload = self._render(sent)
                    raw = await self.runner.asend(payload, sent, self.plan.deadline, self.retrier.deadline_error)
                    response = self._finish(self.runner.parse(raw, sent))
                    break
                except Exception as exc:
                    error, delay = self.retrier.failure(exc)
                except BaseExceptionGroup as group:  # a group holding a BaseException propagates, its secrets masked
                    error, delay = scrub_error(group), None
                except PASSING:
                    raise
                except BaseException as exc:  # the plugin's, while sending (``acontained`` written out: Attempt.asend)
                    error, delay = self.retrier.failure(plugin_aborted(exc, self.runner.name))
                if delay is None:
                    raise error
                await self.plan.clock.asleep(delay)
            return response if call is None else call.ended(response)
        except LLMError as failed:
            if call is None:
                raise
            error = call.gave_up(failed)  # raised once the route is released, as the call raised it
        finally:
            if call is not None:
                call.released(self)
        raise error

    # -- stream --------------------------------------------------------------------

    def _final(self, assembler: StreamAssembler, yielded: bool, call: CallEnd | None = None) -> StreamEvent:
        """The stream's last event, its answer accounted for (and told to the recorders of the ``call`` the stream
        is the whole of)."""
        if not yielded:
            raise LLMServerError(
                "the provider's stream ended without a single event (no text, tool call, usage or finish "
                "reason): the answer was probably not a stream"
            )
        # the assembler already fills in provider, model, attempts and latency, and its usage is priced before the
        # answer is built from it: no copy needed
        model = assembler.model
        priced = type(model) is str  # the answer's model, as the answer built from it gives it
        if priced:
            plugin = self.route.provider.info.name
            assembler.usage = assembler.usage.priced(plugin, _priced_model(plugin, model, self.route.model))
        response = self._account(assembler.response(self.retrier.sent, self.retrier.elapsed()), priced=priced)
        self._assembler = None  # settled: nothing for ``close`` to cut off
        return StreamEvent.response_event(response if call is None else call.ended(response))

    def _unreported(self, state: StreamState, assembler: StreamAssembler) -> StreamEvent | None:
        """The usage event of the usage the parser left unreported (``state.usage_so_far``), folded into the
        answer; ``None`` when there is none."""
        report = state.usage_so_far
        if report is None:
            return None
        state.usage_so_far = None
        event = contained(report, self.runner.name)
        assembler.add(event)
        return event

    def reported_so_far(self) -> Usage | None:
        """The usage this route's stream reported so far, in events or kept by the parser without one
        (``state.usage_so_far``, as Gemini's); ``None`` before any, once the stream settled, or when the kept
        counts cannot be read (as a cut-off counts them: unreported)."""
        state, assembler = self._state, self._assembler
        if state is None or assembler is None:
            return None
        if state.usage_so_far is not None:  # not folded into the answer yet
            try:
                usage = state.usage_so_far().usage
            except Exception:  # a plugin's impossible counts: unreported, as _cut_off takes them
                return None
        else:
            usage = assembler.usage
        return usage if usage is not None and usage.reported else None

    def close(self) -> None:
        """The call is done with this route: a stream abandoned while answering settles as cut off (the
        tokens were spent), and whatever is still reserved is given back."""
        if self._assembler is not None and self._state is not None:
            self._cut_off(self._state, self._assembler, "the stream was abandoned")
        self.retrier.close()

    def _stream_failed(
        self, exc: Exception, state: StreamState, assembler: StreamAssembler, yielded: bool
    ) -> tuple[LLMError, float | None]:
        """A stream's attempt failed with ``exc``: what it spent counted (``_cut_off``; an answer reporting
        impossible usage counts for nothing), then the error and the delay before a retry (``None``: none, only
        before its first event)."""
        if not isinstance(exc, LLMUsageError):
            self._cut_off(state, assembler, "the stream was cut off")
        return self.retrier.failure(exc, may_retry=not yielded)

    def _cut_off(self, state: StreamState, assembler: StreamAssembler, why: str) -> None:
        """A stream that had begun to answer ended early: the tokens were spent, so the budgets count
        what it reported (an event or ``state.usage_so_far``) or, where more, what they reserved (a stream
        refused before answering spent none; a usage so far that cannot be read counts as unreported)."""
        if assembler.answering:
            with contextlib.suppress(Exception):
                self._unreported(state, assembler)
            self.retrier.cut_off(assembler.usage, why)

    def _streams_natively(self) -> bool:
        return self.runner.hooks.implements("stream") or self.runner.hooks.implements("astream")

    def _raw_events(self, sent: Request) -> Iterator[Any]:
        payload = self._render(sent)
        return self.runner.open_stream(payload, self.plan.deadline, self.retrier.deadline_error)

    async def _araw_events(self, sent: Request) -> AsyncIterable[Any]:
        payload = self._render(sent)
        return await self.runner.aopen_stream(payload, self.plan.deadline, self.retrier.deadline_error)

    def stream(self, call: CallEnd | None = None) -> Iterator[StreamEvent]:  # noqa: PLR0915 - one generator
        """Yield stream events; failures before the first event are retried like ``complete``. Given the ``call``
        it is the whole of, it also ends that call (as ``astream``)."""
        error: BaseException  # what the caller gets: an LLMError, or a group that propagates
        try:
            if not self._streams_natively():
                for event in _as_events(self.complete()):
                    if call is not None and event.response is not None:
                        call.ended(event.response)
                    yield event
                return
            while True:
                self.retrier.begin(stream=True)
                state = self._state = StreamState(self.request)
                assembler = self._assembler = StreamAssembler(self.route.provider.name, self.route.model)
                yielded = False
                try:
                    state.request = self._sent_request
                    parse, add, provider = _event_parser(self.runner.hooks), assembler.add, self.runner.name
                    # this loop runs for every chunk: its steps are written out
                    for raw_event in self._raw_events(state.request):
                        assembler.answering = True
                        try:  # ``contained`` written out
                            parsed = parse(raw_event, state)
                        except (Exception, *PASSING):
                            raise
                        except BaseException as exc:
                            raise plugin_aborted(exc, provider) from exc
                        if type(parsed) is list and len(parsed) == 1:  # one event (nearly every chunk): no loops
                            add(event := parsed[0])
                            yielded = True
                            yield event
                            continue
                        events = parsed if type(parsed) is list else list(parsed or ())
                        for event in events:  # the answer so far holds all of them before the first is handed on
                            add(event)
                        for event in events:
                            yielded = True
                            yield event
                    if state.usage_so_far is not None and (usage := self._unreported(state, assembler)) is not None:
                        yielded = True
                        yield usage
                    yield self._final(assembler, yielded, call)
                    return
                except GeneratorExit:
                    self._cut_off(state, assembler, "the stream was abandoned")
                    raise
                except Exception as exc:
                    error, delay = self._stream_failed(exc, state, assembler, yielded)
                except BaseExceptionGroup as group:  # a group holding a BaseException propagates, its secrets masked
                    error, delay = scrub_error(group), None
                if delay is None:
                    raise error
                self.plan.clock.sleep(delay)
        except LLMError as failed:
            if call is None:
                raise
            error = call.gave_up(failed)  # raised once the route is released, as the call raised it
        finally:
            if call is not None:
                call.released(self)
        raise error

    async def astream(self, call: CallEnd | None = None) -> AsyncIterator[StreamEvent]:  # noqa: PLR0915 - one generator
        """Async twin of ``stream``. Given the ``call`` it is the whole of (as ``acomplete``), it also ends that
        call: the answer told to its recorders, a failure raised as its error, and the route released once however
        the stream ends (answered, failed, cancelled or abandoned)."""
        error: BaseException  # what the caller gets: an LLMError, or a group that propagates
        try:
            if not self._streams_natively():
                for event in _as_events(await self.acomplete()):
                    if call is not None and event.response is not None:
                        call.ended(event.response)
                    yield event
                return
            retrier = self.retrier
            while True:
                if retrier.waits:
                    await retrier.abegin(stream=True)
                else:
                    retrier.begin(stream=True)
                state = self._state = StreamState(self.request)
                assembler = self._assembler = StreamAssembler(self.route.provider.name, self.route.model)
                yielded = False
                try:
                    state.request = self._sent_request
                    parse, add, provider = _event_parser(self.runner.hooks), assembler.add, self.runner.name
                    raw_events = await self._araw_events(state.request)
                    read = (items := aiter(raw_events)).__anext__
                    try:
                        while True:  # as in ``stream``; each read contained (``aiter_contained`` written out)
                            try:
                                raw_event = await read()
                            except StopAsyncIteration:
                                break
                            except (Exception, *PASSING):
                                raise
                            except BaseException as exc:
                                raise plugin_aborted(exc, provider) from exc
                            assembler.answering = True
                            try:
                                parsed = parse(raw_event, state)
                            except (Exception, *PASSING):
                                raise
                            except BaseException as exc:
                                raise plugin_aborted(exc, provider) from exc
                            if type(parsed) is list and len(parsed) == 1:
                                add(event := parsed[0])
                                yielded = True
                                yield event
                                continue
                            events = parsed if type(parsed) is list else list(parsed or ())
                            for event in events:
                                add(event)
                            for event in events:
                                yielded = True
                                yield event
                    finally:  # the plugin's stream closed however it ends (read out, failed, abandoned, cancelled)
                        await aclose_stream(raw_events, items)
                    if state.usage_so_far is not None and (usage := self._unreported(state, assembler)) is not None:
                        yielded = True
                        yield usage
                    yield self._final(assembler, yielded, call)
                    return
                except GeneratorExit:
                    self._cut_off(state, assembler, "the stream was abandoned")
                    raise
                except Exception as exc:
                    error, delay = self._stream_failed(exc, state, assembler, yielded)
                except BaseExceptionGroup as group:  # a group holding a BaseException propagates, its secrets masked
                    error, delay = scrub_error(group), None
                if delay is None:
                    raise error
                await self.plan.clock.asleep(delay)
        except LLMError as failed:
            if call is None:
                raise
            error = call.gave_up(failed)  # raised once the route is released, as the call raised it
        finally:
            if call is not None:
                call.released(self)
        raise error


class CallEnd(Protocol):
    """What a pipeline's ``acomplete``, ``stream`` and ``astream`` ask of the call they are the whole of
    (``llmplex.engine.fallback.Call``): its public ending, not its internals."""

    def ended(self, response: Response) -> Response: ...

    def gave_up(self, error: LLMError) -> LLMError: ...

    def released(self, pipeline: Pipeline | None) -> None: ...


_priced_model = lru_cache(maxsize=1024)(priced_model)
"""``priced_model``, worked out once per plugin, answering model and routed model (it reads only constants)."""


def _copied(response: Response, update: dict[str, Any]) -> Response:
    """``response.model_copy(update=update)`` without pydantic's general copy (the one copy a call makes)."""
    if response.__pydantic_private__ is not None or response.__pydantic_extra__ is not None:
        return response.model_copy(update=update)
    copy = assembled(type(response), {**response.__dict__, **update}, response.__pydantic_fields_set__ | update.keys())
    return copy


def _event_parser(hooks: ProviderHooks) -> Callable[[Any, StreamState], Any]:
    """The provider's ``parse_event`` hook as a function of ``(raw_event, state)``, bound once per attempt (no
    wait comes between events): its one plain implementation itself when it takes exactly those arguments,
    else the hook caller."""
    caller = hooks.parse_event
    impls = caller.get_hookimpls()
    if len(impls) == 1 and not (impls[0].wrapper or impls[0].hookwrapper) and impls[0].argnames == _EVENT_ARGS:
        return impls[0].function  # type: ignore[no-any-return]
    return lambda raw_event, state: caller(raw_event=raw_event, state=state)


_EVENT_ARGS = ("raw_event", "state")


def _as_events(response: Response) -> list[StreamEvent]:
    """A whole response as stream events, for providers that cannot stream."""
    events = [StreamEvent(type="text", text=response.text)] if response.text else []
    events += [
        StreamEvent(
            type="tool_call", tool_call_index=i, tool_call_id=c.id, tool_name=c.name, arguments_delta=c.arguments
        )
        for i, c in enumerate(response.tool_calls)
    ]
    events.append(StreamEvent(type="response", response=response))
    return events
