"""``complete`` with handled tools and/or structured output: model calls in rounds until a final answer.

The rounds are written once, as a generator that yields what to do next (ask
the model, run tools); a sync and an async driver perform those steps.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from llmplex.engine.request_builder import PromptInput, ToolInput, build_messages, build_tools
from llmplex.errors import LLMConfigurationError, LLMDeadlineExceededError, LLMOutputParseError, LLMToolLoopError
from llmplex.events import ToolInvoked
from llmplex.masking.values import redact
from llmplex.reliability.budget import as_tracker
from llmplex.reliability.guard import call_before
from llmplex.structured.plan import OutputPlan, choose_strategy
from llmplex.structured.schema import output_spec
from llmplex.tooling.runner import ToolOutcome, ToolRunner, attachments
from llmplex.types import Message, OutputSchema, Response, Tool, ToolCall, Usage
from llmplex.types.tool_context import ToolContext

if TYPE_CHECKING:
    from llmplex.cache.held import HeldWrites
    from llmplex.engine.call_args import CallArgs
    from llmplex.engine.fallback import Call
    from llmplex.engine.telemetry import Telemetry
    from llmplex.provider import Capabilities
    from llmplex.reliability.deadline import Deadline

    # starts one model call of the loop with these messages and arguments (the client's, bound to the model)
    SendRound = Callable[[list[Message], CallArgs], Call]

__all__ = ["DEFAULT_MAX_TOOL_ROUNDS", "Conversation", "FirstRound", "first_round", "wants_conversation"]

DEFAULT_MAX_TOOL_ROUNDS = 10


def wants_conversation(kwargs: Mapping[str, Any]) -> bool:
    """Whether a call needs rounds: structured output, or tools that carry handlers."""
    return kwargs.get("output") is not None or any(_has_handler(tool) for tool in kwargs.get("tools") or ())


def _has_handler(tool: Any) -> bool:
    if isinstance(tool, Tool):
        return tool.handler is not None
    if isinstance(tool, Mapping):
        return tool.get("handler") is not None
    return callable(tool)


@dataclass(frozen=True)
class FirstRound:
    """What the first model call of a ``complete`` with ``output=`` and tools sends, and how to read its answer."""

    plan: OutputPlan | None
    messages: list[Message]
    tools: tuple[Tool, ...]
    tool_choice: str | None

    @property
    def output(self) -> OutputSchema | None:
        """The schema the request carries natively, if the plan sends one."""
        return self.plan.request_output() if self.plan else None


def first_round(
    capabilities: Capabilities,
    prompt: PromptInput,
    *,
    system: str | None = None,
    tools: Sequence[ToolInput] | None = None,
    tool_choice: str | None = None,
    output: Any = None,
    strategy: str | None = None,
) -> FirstRound:
    """The messages, tools and tool choice of the first call, with the output plan for a provider of ``capabilities``.

    Under the tool strategy the output tool joins the tools (forced when no tool
    has a handler); under the prompt strategy the schema joins the instructions.
    """
    built = build_tools(tools)
    plan = OutputPlan(output_spec(output), choose_strategy(capabilities, strategy)) if output is not None else None
    output_tool = plan.output_tool() if plan else None
    forced = output_tool is not None and not any(tool.handler for tool in built)
    if output_tool is not None:
        if output_tool.name in {tool.name for tool in built}:
            raise LLMConfigurationError(
                f"a tool is named {output_tool.name!r} like the output type; rename the tool or the type"
            )
        if forced and tool_choice is None:
            tool_choice = output_tool.name
        built = (*built, output_tool)
    messages = _with_instructions(list(build_messages(prompt, system)), plan.instructions(forced) if plan else None)
    return FirstRound(plan, messages, built, tool_choice)


def _planning_expired() -> LLMDeadlineExceededError:
    return LLMDeadlineExceededError(
        "deadline reached before the request could be sent, while checking the tools and the output schema (a "
        "first use also imports the JSON Schema validator: allow it more time)",
        attempts=0,
    )


@dataclass(frozen=True)
class _Ask:
    call: Call


@dataclass(frozen=True)
class _RunTools:
    calls: tuple[ToolCall, ...]


class Conversation:
    """One ``complete`` call that may take several model calls.

    Tool rounds run handlers and send their results back until an answer has no
    tool calls (at most ``max_tool_rounds`` rounds); with ``output=`` the answer
    is then parsed and validated, and re-asked up to ``output_retries`` times.
    Transport retries happen inside each model call and never count here. The
    returned Response carries the usage of every round together.
    """

    def __init__(
        self,
        capabilities: Capabilities,
        prompt: PromptInput,
        kwargs: Mapping[str, Any],
        *,
        deadline: Deadline | None,
        send: SendRound,
        telemetry: Telemetry,
    ) -> None:
        """Plan the rounds for a provider of ``capabilities``; ``send`` starts each model call.

        The caller (the client) resolves the model and the call's one ``deadline``
        before the loop starts and passes them down, so this layer never calls up.
        """
        args = dict(kwargs)
        output = args.pop("output", None)
        self.output_retries = _count(args.pop("output_retries", None), "output_retries", 0, minimum=0)
        self.max_tool_rounds = _count(
            args.pop("max_tool_rounds", None), "max_tool_rounds", DEFAULT_MAX_TOOL_ROUNDS, minimum=1
        )
        strategy = args.pop("output_strategy", None)
        context = args.pop("tool_context", None) or ToolContext()
        if not isinstance(context, ToolContext):
            raise LLMConfigurationError(f"tool_context must be a ToolContext, got {type(context).__name__}")
        self.send = send
        self.telemetry = telemetry
        self.deadline = deadline
        planning = partial(
            first_round,
            capabilities,
            prompt,
            system=args.pop("system", None),
            tools=args.pop("tools", None),
            tool_choice=args.pop("tool_choice", None),
            output=output,
            strategy=strategy,
        )
        # held to the deadline: a first use imports the JSON Schema validator (seconds on a busy machine)
        first = call_before(planning, deadline, _planning_expired)
        self.plan = first.plan
        self.messages = first.messages
        tools = first.tools
        args.update(
            deadline=deadline,
            budget=as_tracker(args.pop("budget", None)),  # one budget tracker for every round too
            tools=tools,
            tool_choice=first.tool_choice,
            output=first.output,
        )
        self.round_args = cast("CallArgs", args)
        self.runner = ToolRunner(tools, context, self._report)
        self._current: Call | None = None
        self._held: HeldWrites | None = None

    # -- drivers -------------------------------------------------------------------------

    def run(self) -> Response:
        """Run every round synchronously."""
        with self._validating():
            steps = self._rounds()
            reply: Any = None
            while True:
                try:
                    step = steps.send(reply)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
                reply = step.call.complete() if isinstance(step, _Ask) else self.runner.run(step.calls, self.deadline)

    async def arun(self) -> Response:
        """Run every round asynchronously."""
        with self._validating():
            steps = self._rounds()
            reply: Any = None
            while True:
                try:
                    step = steps.send(reply)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
                reply = (
                    await step.call.acomplete()
                    if isinstance(step, _Ask)
                    else await self.runner.arun(step.calls, self.deadline)
                )

    @contextmanager
    def _validating(self) -> Iterator[None]:
        """With structured output, the response cache stores an answer only once it is accepted (its value
        valid, or it asked for tools): an answer that fails validation is never replayed."""
        if self.plan is None:
            yield
            return
        from llmplex.cache.held import held_writes  # not at import: `import llmplex` leaves the cache out

        with held_writes() as held:
            self._held = held
            try:
                yield
            finally:
                self._held = None

    # -- the rounds ----------------------------------------------------------------------

    def _rounds(self) -> Generator[_Ask | _RunTools, Any, Response]:
        usage = Usage()
        tool_rounds = parse_failures = 0
        while True:
            call = self._current = self.send(self.messages, self.round_args)
            response: Response = yield _Ask(call)
            usage += response.usage
            if self.runner.should_run(response):
                self._accept(True)
                if tool_rounds >= self.max_tool_rounds:
                    raise self._loop_error(response)
                tool_rounds += 1
                outcomes: list[ToolOutcome] = yield _RunTools(response.tool_calls)
                self.messages += [response.message(), *(outcome.message() for outcome in outcomes)]
                self.messages += attachments(outcomes)  # images, audio, documents tools returned
                continue
            if self.plan is None:
                return response.model_copy(update={"usage": usage})
            try:
                value = self.plan.read(response, self.deadline)
            except LLMOutputParseError as exc:
                self._accept(False)
                if parse_failures >= self.output_retries:
                    exc.context["output_retries"] = self.output_retries
                    raise
                parse_failures += 1
                self.messages += self.plan.reask(response, exc)
                continue
            self._accept(True)
            return response.model_copy(update={"usage": usage, "output": value})

    def _accept(self, accepted: bool) -> None:
        """Store (``True``) or drop the response cache's held writes of the last answer."""
        if self._held is None:
            return
        if accepted:
            self._held.commit()
        else:
            self._held.drop()

    def _loop_error(self, response: Response) -> LLMToolLoopError:
        asked = ", ".join(sorted({call.name for call in response.tool_calls}))
        return LLMToolLoopError(
            f"the model still asked for tools ({asked}) after max_tool_rounds={self.max_tool_rounds} rounds; "
            "raise max_tool_rounds or make the tools' results lead to an answer",
            provider=response.provider or None,
            model=response.model or None,
        )

    def _report(self, outcome: ToolOutcome) -> None:
        if self._current is None:
            return
        self.telemetry.emit(
            ToolInvoked,
            name=outcome.call.name,
            arguments=redact(outcome.arguments),
            result=redact(outcome.result),
            error=outcome.error,
            duration=outcome.duration,
            **self._current.where(),
        )


def _with_instructions(messages: list[Message], instructions: str | None) -> list[Message]:
    if not instructions:
        return messages
    if messages[0].role == "system":
        first = messages[0]
        return [first.model_copy(update={"content": f"{first.content or ''}\n\n{instructions}".strip()}), *messages[1:]]
    return [Message.system(instructions), *messages]


def _count(value: Any, name: str, default: int, *, minimum: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise LLMConfigurationError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return value
