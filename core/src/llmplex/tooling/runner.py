"""Run the tool calls of one model turn: validate arguments, call handlers, build tool messages.

Nothing a tool does aborts the loop but overrunning the call's deadline: an
unknown tool, invalid arguments or a handler that raises become a tool message
carrying the error, so the model can correct itself. A handler still running
at the deadline raises ``LLMDeadlineExceededError`` naming it: a sync handler
runs on a worker thread that is left behind, an async one is cancelled (see
``llmplex.reliability.guard``).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import pydantic_core
from pydantic import ValidationError

from llmplex.engine.bridge import run_on_loop
from llmplex.errors import LLMDeadlineExceededError, LLMToolSourceError
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.guard import await_before, call_before, in_worker
from llmplex.structured.schema import OutputInvalidError, describe_errors, json_schema_validator, pydantic_errors
from llmplex.types import Message, Response, Tool, ToolCall
from llmplex.types.function_tool import FunctionHandler, context_parameter
from llmplex.types.parts import Audio, Document, Image
from llmplex.types.tool_context import ToolContext
from llmplex.types.tool_result import ToolResult

__all__ = ["ToolOutcome", "ToolRunner", "attachments", "current_tool_call"]

current_tool_call: ContextVar[ToolCall | None] = ContextVar("llmplex_current_tool_call", default=None)
"""The call whose handler is running (``None`` elsewhere): a handler can pair its own records with ``.id``."""


@dataclass(frozen=True)
class ToolOutcome:
    """One call's result: ``content`` is what the model is sent back; ``parts`` (from a ``ToolResult``) follow it."""

    call: ToolCall
    content: str
    arguments: Any = None
    result: Any = None
    error: str | None = None
    duration: float = 0.0
    parts: tuple[Image | Document | Audio, ...] = ()

    def message(self) -> Message:
        """The tool message answering the call."""
        return Message.tool(self.call.id, self.content, self.call.name)


@dataclass(frozen=True)
class _Invocation:
    call: ToolCall
    handler: Callable[..., Any]
    arguments: dict[str, Any]
    kwargs: dict[str, Any]
    uses_context: bool
    is_async: bool


class ToolRunner:
    """Executes tool calls against the handlers of ``tools``, sharing one ToolContext."""

    def __init__(
        self,
        tools: Sequence[Tool],
        context: ToolContext,
        on_outcome: Callable[[ToolOutcome], None] = lambda outcome: None,
    ) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.context = context
        self.on_outcome = on_outcome
        self._validators: dict[str, Callable[[Any], Any]] = {}
        self._context_params = {tool.name: _context_param(tool.handler) for tool in tools if tool.handler is not None}

    def should_run(self, response: Response) -> bool:
        """Whether ``response`` asks for tools this runner answers (none of them a tool without handler)."""
        return bool(response.tool_calls) and all(
            call.name not in self.tools or self.tools[call.name].handler is not None for call in response.tool_calls
        )

    # -- drivers -------------------------------------------------------------------------

    def run(self, calls: Sequence[ToolCall], deadline: Deadline | None = None) -> list[ToolOutcome]:
        """Run ``calls`` from sync code: sync handlers in order, async ones together on the bridge loop."""
        prepared = [self._prepare(call) for call in calls]
        outcomes: dict[int, ToolOutcome] = {}
        pending: dict[int, _Invocation] = {}
        for index, item in enumerate(prepared):
            if isinstance(item, ToolOutcome):
                outcomes[index] = item
            elif item.is_async:
                pending[index] = item
            else:
                outcomes[index] = self._invoke(item, deadline)
        if pending:
            done = run_on_loop(lambda: self._gather(list(pending.values()), deadline))
            outcomes.update(zip(pending, done, strict=True))
        return self._report([outcomes[i] for i in range(len(prepared))])

    async def arun(self, calls: Sequence[ToolCall], deadline: Deadline | None = None) -> list[ToolOutcome]:
        """Run ``calls`` from async code: async handlers concurrently, sync ones in order."""
        prepared = [self._prepare(call) for call in calls]
        invocations = [item for item in prepared if isinstance(item, _Invocation)]
        done = iter(await self._gather(invocations, deadline))
        return self._report([item if isinstance(item, ToolOutcome) else next(done) for item in prepared])

    def _report(self, outcomes: list[ToolOutcome]) -> list[ToolOutcome]:
        for outcome in outcomes:
            self.on_outcome(outcome)
        return outcomes

    # -- one call ------------------------------------------------------------------------

    def _prepare(self, call: ToolCall) -> _Invocation | ToolOutcome:
        tool = self.tools.get(call.name)
        if tool is None or tool.handler is None:
            known = ", ".join(sorted(name for name, t in self.tools.items() if t.handler is not None)) or "none"
            return _failed(call, None, f"unknown tool {call.name!r}; available tools: {known}")
        try:
            arguments = call.parsed_arguments()
        except ValueError as exc:
            return _failed(call, call.arguments, f"the arguments of {call.name!r} are not valid JSON ({exc})")
        if not isinstance(arguments, dict):
            return _failed(call, arguments, f"the arguments of {call.name!r} must be a JSON object")
        handler = tool.handler
        try:
            kwargs = self._validated(tool, handler, arguments)
        except OutputInvalidError as exc:
            problems = describe_errors(exc.errors, root="(arguments)")
            return _failed(call, arguments, f"invalid arguments for {call.name!r}: {problems}")
        context_param = self._context_params[tool.name]
        if context_param is not None:
            kwargs[context_param] = self.context
        return _Invocation(call, handler, arguments, kwargs, context_param is not None, _is_async(handler))

    def _validated(self, tool: Tool, handler: Callable[..., Any], arguments: dict[str, Any]) -> dict[str, Any]:
        """The handler's keyword arguments; raises OutputInvalidError when ``arguments`` do not fit."""
        if isinstance(handler, FunctionHandler):
            try:
                return handler.keyword_arguments(arguments)
            except ValidationError as exc:
                raise OutputInvalidError(pydantic_errors(exc)) from None
        validate = self._validators.get(tool.name)
        if validate is None:
            validate = self._validators[tool.name] = json_schema_validator(tool.parameters)
        return dict(validate(arguments))

    def _invoke(self, invocation: _Invocation, deadline: Deadline | None) -> ToolOutcome:
        """One sync handler; with a deadline it runs on a worker thread, left there when the deadline passes."""

        def call() -> Any:
            token = current_tool_call.set(invocation.call)
            try:
                result = invocation.handler(**invocation.kwargs)
                if inspect.isawaitable(result):
                    awaitable = result
                    result = run_on_loop(lambda: awaitable)
                return result
            finally:
                current_tool_call.reset(token)

        started = time.perf_counter()
        try:
            with self.context.transaction() if invocation.uses_context else nullcontext():
                result = call_before(call, deadline, self._overran(invocation, started))
                content = _render(invocation.call.name, result)
        except Exception as exc:
            return self._raised(invocation, exc, started)
        return _succeeded(invocation, result, content, time.perf_counter() - started)

    async def _ainvoke(self, invocation: _Invocation, lock: asyncio.Lock, deadline: Deadline | None) -> ToolOutcome:
        """One handler from async code: an async one cancelled at the deadline, a sync one on a worker thread
        when there is a deadline to leave it at."""

        def handle() -> Any:
            token = current_tool_call.set(invocation.call)
            try:
                return invocation.handler(**invocation.kwargs)
            finally:
                current_tool_call.reset(token)

        async def call() -> Any:
            if deadline is not None and not invocation.is_async:
                return await in_worker(handle)
            token = current_tool_call.set(invocation.call)
            try:
                result = invocation.handler(**invocation.kwargs)
                return await result if inspect.isawaitable(result) else result
            finally:
                current_tool_call.reset(token)

        started = time.perf_counter()
        serial: AbstractAsyncContextManager[Any] = lock if invocation.uses_context else nullcontext()
        try:
            async with serial:
                with self.context.transaction() if invocation.uses_context else nullcontext():
                    result = await await_before(call, deadline, self._overran(invocation, started))
                    content = _render(invocation.call.name, result)
        except Exception as exc:
            return self._raised(invocation, exc, started)
        return _succeeded(invocation, result, content, time.perf_counter() - started)

    async def _gather(self, invocations: list[_Invocation], deadline: Deadline | None) -> list[ToolOutcome]:
        lock = asyncio.Lock()
        results: dict[int, ToolOutcome] = {}
        concurrent: dict[int, asyncio.Future[ToolOutcome]] = {}
        try:
            for index, invocation in enumerate(invocations):
                if invocation.is_async:
                    concurrent[index] = asyncio.ensure_future(self._ainvoke(invocation, lock, deadline))
                else:
                    results[index] = await self._ainvoke(invocation, lock, deadline)
            for index, task in concurrent.items():
                results[index] = await task
        finally:  # one overran: the others end with the call (each also meets the deadline)
            for task in concurrent.values():
                task.cancel()
            await asyncio.gather(*concurrent.values(), return_exceptions=True)
        return [results[i] for i in range(len(invocations))]

    def _overran(self, invocation: _Invocation, started: float) -> Callable[[], LLMDeadlineExceededError]:
        """The error of a handler still running at the deadline (its state changes are rolled back)."""
        name = invocation.call.name

        def expired() -> LLMDeadlineExceededError:
            return LLMDeadlineExceededError(
                f"the call's deadline passed while tool {name!r} was running ({time.perf_counter() - started:.2f} s "
                "in it); make the tool return sooner or give the call more time (timeout=)",
                context={"tool": name},
            )

        return expired

    def _raised(self, invocation: _Invocation, exc: Exception, started: float) -> ToolOutcome:
        """The outcome of a handler that raised, for the model; a deadline it overran, or a failed tool source
        (an MCP server that crashed), ends the call instead."""
        outcome = _raised(invocation, exc, time.perf_counter() - started)
        overran = isinstance(exc, LLMDeadlineExceededError) and exc.context.get("tool") == invocation.call.name
        if overran or isinstance(exc, LLMToolSourceError):
            self.on_outcome(outcome)  # observers see the tool that overran or whose source failed
            raise exc
        return outcome


def attachments(outcomes: Sequence[ToolOutcome]) -> list[Message]:
    """The user message carrying the parts tools returned (most providers take media only from users), if any."""
    pieces: list[str | Image | Document | Audio] = []
    for outcome in outcomes:
        if outcome.parts:
            pieces += [f"Attachments returned by tool {outcome.call.name!r} (call {outcome.call.id}):", *outcome.parts]
    return [Message.user(pieces)] if pieces else []


def _context_param(handler: Callable[..., Any]) -> str | None:
    return handler.context_param if isinstance(handler, FunctionHandler) else context_parameter(handler)


def _is_async(handler: Callable[..., Any]) -> bool:
    if isinstance(handler, FunctionHandler):
        return handler.is_async
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(type(handler).__call__)


class _NotJSONError(Exception):
    """A handler's result that cannot be sent to the model; raised inside its transaction so it rolls back."""


def _render(name: str, result: Any) -> str:
    """The text sent back for ``result``: a str as it is, anything else as JSON (never a ``str()`` guess)."""
    unknown: list[str] = []

    def refuse(value: Any) -> Any:
        unknown.append(type(value).__qualname__)
        raise TypeError(unknown[0])

    try:
        if isinstance(result, ToolResult):
            result = result.text
        if isinstance(result, str):
            result.encode("utf-8")
            return result
        return pydantic_core.to_json(result, fallback=refuse).decode()
    except (pydantic_core.PydanticSerializationError, UnicodeEncodeError) as exc:
        reason = str(exc).removeprefix("Error serializing to JSON: ")
        detail = f"type {unknown[0]} has no JSON form" if unknown else f"{type(result).__qualname__}: {reason}"
        raise _NotJSONError(
            f"tool {name!r} returned a result that cannot be sent as JSON ({detail}); "
            "return a str, or data made of dicts, lists, str, numbers, bools, None, dataclasses or pydantic models"
        ) from None


def _failed(call: ToolCall, arguments: Any, message: str) -> ToolOutcome:
    return ToolOutcome(call, f"Error: {message}", arguments=arguments, error=message)


def _raised(invocation: _Invocation, exc: Exception, duration: float) -> ToolOutcome:
    if isinstance(exc, _NotJSONError):
        message = str(exc)
    else:
        message = f"tool {invocation.call.name!r} failed: {type(exc).__name__}: {exc}"
    return ToolOutcome(
        invocation.call, f"Error: {message}", arguments=invocation.arguments, error=message, duration=duration
    )


def _succeeded(invocation: _Invocation, result: Any, content: str, duration: float) -> ToolOutcome:
    if isinstance(result, ToolResult):
        return _from_tool_result(invocation, result, duration)
    return ToolOutcome(invocation.call, content, arguments=invocation.arguments, result=result, duration=duration)


def _from_tool_result(invocation: _Invocation, result: ToolResult, duration: float) -> ToolOutcome:
    """A ``ToolResult``: its text for the model (a tool error when ``is_error``), its parts for the next turn."""
    shown = {
        "text": result.text,
        "structured": result.structured,
        "parts": [part.media_type for part in result.parts],
        "is_error": result.is_error,
    }
    error = f"tool {invocation.call.name!r} returned an error: {result.text}" if result.is_error else None
    return ToolOutcome(
        invocation.call,
        f"Error: {result.text}" if result.is_error else result.text,
        arguments=invocation.arguments,
        result=shown,
        error=error,
        duration=duration,
        parts=result.parts,
    )
