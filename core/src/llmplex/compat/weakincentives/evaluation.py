"""One ``evaluate``: render, publish ``PromptRendered``, one llmplex ``complete`` call, publish ``PromptExecuted``.

Retries, backoff, deadlines, the tool loop, structured output and budgets are
llmplex's own; this module only translates weakincentives' objects into the
call's arguments and llmplex's answer and errors back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from llmplex.compat.weakincentives.budget import Budget, BudgetExceededError, BudgetTracker, Deadline, engine_deadline
from llmplex.compat.weakincentives.errors import (
    PROMPT_EVALUATION_PHASE_BUDGET,
    DeadlineExceededError,
    PromptEvaluationError,
    evaluation_error,
)
from llmplex.compat.weakincentives.events import PromptExecuted, PromptRendered, TokenUsage
from llmplex.compat.weakincentives.prompt import Prompt, RenderedPrompt
from llmplex.compat.weakincentives.tool_run import ToolContext, run_tool
from llmplex.compat.weakincentives.tools import Tool
from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.reliability.deadline import Deadline as EngineDeadline

if TYPE_CHECKING:
    from llmplex.client import Client
    from llmplex.compat.weakincentives.session import Session
    from llmplex.types import Response

__all__ = ["CallPlan", "PromptResponse", "evaluate_prompt"]

OutputT = TypeVar("OutputT")
_ITEMS = "items"  # weakincentives wraps array output in {"items": [...]}


@dataclass(frozen=True)
class PromptResponse(Generic[OutputT]):
    """The result of ``evaluate``: ``text`` for a plain prompt, ``output`` (the dataclass) for structured output."""

    prompt_name: str
    text: str | None
    output: OutputT | None


@dataclass(frozen=True)
class CallPlan:
    """What an adapter fixes for every evaluation: where to send, and with which options."""

    adapter_name: str
    client: Client
    model: str
    options: Mapping[str, Any]
    provider_options: Mapping[str, Any]
    tool_choice: Any
    throttle: Any
    timeout: float | None = None


def _prompt_name(prompt: Prompt[Any]) -> str:
    return prompt.name or type(prompt.template).__name__


def _expired(*deadlines: Deadline | None) -> bool:
    return any(d is not None and d.remaining() <= timedelta(0) for d in deadlines)


def _deadline(plan: CallPlan, *deadlines: Deadline | None) -> EngineDeadline | None:
    found = engine_deadline(*deadlines)
    if plan.timeout is None:
        return found
    if found is None or found.remaining() > plan.timeout:
        return EngineDeadline.after(plan.timeout)
    return found


def _output_type(rendered: RenderedPrompt[Any]) -> Any:
    config = rendered.structured_output
    if config is None:
        return None
    if config.container == "object":
        return config.dataclass_type
    item: Any = config.dataclass_type
    return dataclasses.make_dataclass(f"{item.__name__}List", [(_ITEMS, list[item])])


def _tool_choice(choice: Any) -> str | None:
    if choice is None or isinstance(choice, str):
        return choice
    function = choice.get("function") if isinstance(choice, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else choice.get("name")
    return name if isinstance(name, str) else None


def _usage(response: Response) -> TokenUsage:
    usage = response.usage
    return TokenUsage(usage.input_tokens, usage.output_tokens, usage.cached_tokens)


def _check_arguments(prompt: Any, session: Any, deadline: Any, budget: Any, budget_tracker: Any) -> None:
    """Wrong argument types are configuration errors that say what to pass."""
    expected = (
        ("prompt", prompt, Prompt, "a Prompt: Prompt(template).bind(params)"),
        ("deadline", deadline, Deadline, "a Deadline(expires_at=...) from this module, or None"),
        ("budget", budget, Budget, "a Budget(...) from this module, or None"),
        ("budget_tracker", budget_tracker, BudgetTracker, "a BudgetTracker(budget) from this module, or None"),
    )
    for name, value, kind, wanted in expected:
        if (value is not None or name == "prompt") and not isinstance(value, kind):
            raise LLMConfigurationError(f"evaluate() {name} must be {wanted}, got {type(value).__name__}")
    if not callable(getattr(getattr(session, "dispatcher", None), "dispatch", None)):
        raise LLMConfigurationError(
            f"evaluate() session must be a Session (with a dispatcher), got {type(session).__name__}"
        )


def evaluate_prompt(
    plan: CallPlan,
    adapter: Any,
    prompt: Prompt[OutputT],
    session: Session,
    deadline: Deadline | None,
    budget: Budget | None,
    budget_tracker: BudgetTracker | None,
) -> PromptResponse[OutputT]:
    """Evaluate ``prompt`` through ``plan``; every failure is a ``PromptEvaluationError``."""
    _check_arguments(prompt, session, deadline, budget, budget_tracker)
    name = _prompt_name(prompt)
    tracker = budget_tracker if budget_tracker is not None else BudgetTracker(budget) if budget is not None else None
    budget_deadline = tracker.budget.deadline if tracker is not None else None
    if _expired(deadline, budget_deadline):
        raise DeadlineExceededError("Deadline expired before evaluation started.", prompt_name=name)
    if tracker is not None:
        prompt.bind(resources={BudgetTracker: tracker})
    rendered = prompt.render(session=session)
    session.dispatcher.dispatch(
        PromptRendered(
            prompt_ns=prompt.ns,
            prompt_key=prompt.key,
            prompt_name=prompt.name,
            adapter=plan.adapter_name,
            session_id=session.session_id,
            render_inputs=prompt.params,
            rendered_prompt=rendered.text,
            created_at=datetime.now(UTC),
        )
    )
    context = ToolContext(prompt, rendered, adapter, session, deadline, tracker)

    def invoke(tool: Tool[Any, Any], arguments: Mapping[str, Any]) -> str:
        return run_tool(tool, arguments, context, plan.adapter_name, name)

    tools = [tool.engine_tool(invoke) for tool in rendered.tools]
    output_type = _output_type(rendered)
    call: dict[str, Any] = dict(plan.options)
    if tools:
        call.update(tools=tools, tool_choice=_tool_choice(plan.tool_choice))
    if output_type is not None:
        call["output"] = output_type
    with prompt.resources:
        try:
            response = plan.client.complete(
                plan.model,
                [{"role": "system", "content": rendered.text}],
                deadline=_deadline(plan, deadline, budget_deadline),
                throttle=plan.throttle,
                budget=tracker.engine if tracker is not None else None,
                provider_options=dict(plan.provider_options) or None,
                **call,
            )
        except LLMError as error:
            raise evaluation_error(error, name, rendered.output_type) from error
    return _finish(plan, session, name, rendered, response, tracker)


def _finish(
    plan: CallPlan,
    session: Session,
    name: str,
    rendered: RenderedPrompt[Any],
    response: Response,
    tracker: BudgetTracker | None,
) -> PromptResponse[Any]:
    if tracker is not None:
        tracker.record(response.usage)
        try:
            tracker.check()
        except BudgetExceededError as error:
            raise PromptEvaluationError(
                str(error), prompt_name=name, phase=PROMPT_EVALUATION_PHASE_BUDGET, cause=error
            ) from error
    output = response.output
    if output is not None and rendered.container == "array":
        output = getattr(output, _ITEMS)
    text = None if rendered.structured_output is not None else (response.text or None)
    result = PromptResponse(prompt_name=name, text=text, output=output)
    session.dispatcher.dispatch(
        PromptExecuted(
            prompt_name=name,
            adapter=plan.adapter_name,
            result=result,
            session_id=session.session_id,
            created_at=datetime.now(UTC),
            usage=_usage(response),
        )
    )
    return result
