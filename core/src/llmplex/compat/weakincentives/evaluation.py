"""One ``evaluate``: render, publish ``PromptRendered``, one llmplex ``complete`` call, publish ``PromptExecuted``.

Retries, backoff, deadlines, the tool loop, structured output and budgets are
llmplex's own; this module only translates weakincentives' objects into the
call's arguments and llmplex's answer and errors back.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, create_model, model_validator

from llmplex.compat.weakincentives.budget import BudgetExceededError, BudgetTracker, engine_deadline
from llmplex.compat.weakincentives.errors import (
    PROMPT_EVALUATION_PHASE_BUDGET,
    DeadlineExceededError,
    PromptEvaluationError,
    evaluation_error,
)
from llmplex.compat.weakincentives.foreign import Kit, engine_tool_of, kit_of, our_budget, tracker_of
from llmplex.compat.weakincentives.response import PromptResponse
from llmplex.compat.weakincentives.tool_run import run_tool
from llmplex.compat.weakincentives.tools import Tool
from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.reliability.deadline import Deadline as EngineDeadline

if TYPE_CHECKING:
    from llmplex.client import Client
    from llmplex.types import Response

__all__ = ["CallPlan", "PromptResponse", "evaluate_prompt"]

logger = logging.getLogger("llmplex.compat.weakincentives")

OutputT = TypeVar("OutputT")
_ITEMS = "items"  # weakincentives wraps array output in {"items": [...]}


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


def _prompt_name(prompt: Any) -> str:
    return getattr(prompt, "name", None) or type(prompt.template).__name__


def _expired(*deadlines: Any) -> bool:
    return any(d is not None and d.remaining() <= timedelta(0) for d in deadlines)


def _deadline(plan: CallPlan, *deadlines: Any) -> EngineDeadline | None:
    found = engine_deadline(*deadlines)
    if plan.timeout is None:
        return found
    if found is None or found.remaining() > plan.timeout:
        return EngineDeadline.after(plan.timeout)
    return found


class _ArrayOutput(BaseModel):
    """The object an array output is asked for as; a bare JSON array answers it too, as in weakincentives."""

    @model_validator(mode="before")
    @classmethod
    def _bare(cls, data: Any) -> Any:
        return {_ITEMS: data} if isinstance(data, list) else data


def _output_type(rendered: Any) -> Any:
    item: Any = rendered.output_type
    if item is None:
        return None
    if rendered.container != "array":
        return item
    return create_model(f"{item.__name__}List", __base__=_ArrayOutput, items=(list[item], ...))  # _ITEMS


def _tool_choice(choice: Any) -> str | None:
    if choice is None or isinstance(choice, str):
        return choice
    function = choice.get("function") if isinstance(choice, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else choice.get("name")
    return name if isinstance(name, str) else None


def _usage(response: Response) -> dict[str, int]:
    usage = response.usage
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cached_tokens": usage.cached_tokens,
    }


def _check_arguments(prompt: Any, session: Any, deadline: Any, budget: Any, budget_tracker: Any) -> None:
    """Wrong argument types are configuration errors that say what to pass (checked by protocol)."""
    expected = (
        ("prompt", prompt, ("render", "bind"), "a Prompt: Prompt(template).bind(params)"),
        ("deadline", deadline, ("remaining",), "a Deadline(expires_at=...), or None"),
        ("budget", budget, ("max_total_tokens", "deadline"), "a Budget(...), or None"),
        ("budget_tracker", budget_tracker, ("budget",), "a BudgetTracker(budget), or None"),
    )
    for name, value, members, wanted in expected:
        if (value is not None or name == "prompt") and not all(hasattr(value, m) for m in members):
            raise LLMConfigurationError(f"evaluate() {name} must be {wanted}, got {type(value).__name__}")
    if deadline is not None and not isinstance(getattr(deadline, "expires_at", None), datetime):
        raise LLMConfigurationError(
            f"evaluate() deadline must be a Deadline(expires_at=<aware datetime>), got {type(deadline).__name__}"
        )
    if not callable(getattr(getattr(session, "dispatcher", None), "dispatch", None)):
        raise LLMConfigurationError(
            f"evaluate() session must be a Session (with a dispatcher), got {type(session).__name__}"
        )


def evaluate_prompt(
    plan: CallPlan,
    adapter: Any,
    prompt: Any,
    session: Any,
    deadline: Any,
    budget: Any,
    budget_tracker: Any,
) -> Any:
    """Evaluate ``prompt`` through ``plan``; every failure is a ``PromptEvaluationError``.

    ``prompt``, ``session``, ``deadline`` and the budget objects are this
    module's or the weakincentives package's own (see ``foreign``).
    """
    _check_arguments(prompt, session, deadline, budget, budget_tracker)
    name = _prompt_name(prompt)
    events, handlers = kit_of(session), kit_of(prompt)
    tracker = tracker_of(budget_tracker)
    if tracker is None and budget is not None:
        tracker = BudgetTracker(our_budget(budget))  # type: ignore[arg-type]
    budget_deadline = tracker.budget.deadline if tracker is not None else None
    if _expired(deadline, budget_deadline):
        raise DeadlineExceededError("Deadline expired before evaluation started.", prompt_name=name)
    shared = budget_tracker if budget_tracker is not None else tracker
    if shared is not None:
        prompt.bind(resources={type(shared): shared})
    logger.debug("prompt.render.start", extra={"event": "prompt.render.start", "prompt_name": name})
    rendered = prompt.render(session=session)
    logger.debug("prompt.render.complete", extra={"event": "prompt.render.complete", "prompt_name": name})
    session.dispatcher.dispatch(
        events.build(
            "prompt_rendered",
            prompt_ns=prompt.ns,
            prompt_key=prompt.key,
            prompt_name=prompt.name,
            adapter=plan.adapter_name,
            session_id=getattr(session, "session_id", None),
            render_inputs=prompt.params,
            rendered_prompt=rendered.text,
            created_at=datetime.now(UTC),
        )
    )
    context = handlers.build(
        "tool_context",
        prompt=prompt,
        rendered_prompt=rendered,
        adapter=adapter,
        session=session,
        deadline=deadline,
        budget_tracker=tracker,
    )

    def invoke(tool: Tool[Any, Any], arguments: Mapping[str, Any]) -> str:
        return run_tool(tool, arguments, context, plan.adapter_name, name, events.tool_invoked)

    tools = [engine_tool_of(tool).engine_tool(invoke) for tool in rendered.tools]
    output_type = _output_type(rendered)
    call: dict[str, Any] = dict(plan.options)
    if tools:
        call.update(tools=tools, tool_choice=_tool_choice(plan.tool_choice))
    if output_type is not None:
        call["output"] = output_type
    with _resource_scope(prompt):
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
    logger.debug("prompt.call.complete", extra={"event": "prompt.call.complete", "prompt_name": name})
    result = _finish(session, name, rendered, response, tracker, events)
    _record_foreign(budget_tracker, tracker, events)
    session.dispatcher.dispatch(
        events.build(
            "prompt_executed",
            prompt_name=name,
            adapter=plan.adapter_name,
            result=result,
            session_id=getattr(session, "session_id", None),
            created_at=datetime.now(UTC),
            usage=events.build("token_usage", **_usage(response)),
        )
    )
    return result


def _resource_scope(prompt: Any) -> Any:
    """``prompt.resources`` to enter, unless the caller already entered it (seed 002: "with prompt.resources:
    adapter.evaluate(...)"; weakincentives' own prompts refuse a second entry)."""
    if getattr(prompt, "_resource_context", None) is not None:
        return contextlib.nullcontext()
    return prompt.resources


def _record_foreign(given: Any, ours: BudgetTracker | None, events: Kit) -> None:
    """A weakincentives tracker passed in learns what this evaluation consumed."""
    if given is None or given is ours or ours is None or not hasattr(given, "record_cumulative"):
        return
    used = ours.consumed
    given.record_cumulative(
        str(id(ours)),
        events.build(
            "token_usage",
            input_tokens=used.input_tokens,
            output_tokens=used.output_tokens,
            cached_tokens=used.cached_tokens,
        ),
    )


def _finish(
    session: Any,
    name: str,
    rendered: Any,
    response: Response,
    tracker: BudgetTracker | None,
    events: Kit,
) -> Any:
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
    text = None if rendered.output_type is not None else (response.text or None)
    return events.build("prompt_response", prompt_name=name, text=text, output=output)
