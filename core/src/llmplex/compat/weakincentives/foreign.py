"""The weakincentives package's own objects in an llmplex evaluation: which classes to build events with.

A user who keeps weakincentives' ``Prompt``, ``Session`` and tools hands them to
llmplex's adapters; ``evaluate`` reads them by the protocol they expose
(``render``, ``resources``, ``bind``; a rendered prompt's ``text``, ``tools``,
``output_type``, ``container``) and answers in their package's own types: its
``PromptResponse``, its telemetry events on its session's dispatcher (so its
session's slices fill as they would), its ``ToolContext`` for its tool handlers.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from typing import Any

from llmplex.compat.weakincentives.budget import Budget, BudgetTracker, Deadline
from llmplex.compat.weakincentives.events import PromptExecuted, PromptRendered, TokenUsage, ToolInvoked
from llmplex.compat.weakincentives.response import PromptResponse
from llmplex.compat.weakincentives.tool_run import ToolContext
from llmplex.compat.weakincentives.tools import Tool

__all__ = ["OURS", "Kit", "engine_tool_of", "kit_of", "our_budget", "tracker_of"]


@dataclass(frozen=True)
class Kit:
    """The classes one package builds an evaluation's results with."""

    prompt_rendered: Any
    prompt_executed: Any
    tool_invoked: Any
    token_usage: Any
    prompt_response: Any
    tool_context: Any

    def build(self, kind: str, **values: Any) -> Any:
        """An instance of ``kind`` (a field name above) from the ``values`` its class has fields for."""
        cls = getattr(self, kind)
        names = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set(values)
        return cls(**{k: v for k, v in values.items() if k in names})


OURS = Kit(PromptRendered, PromptExecuted, ToolInvoked, TokenUsage, PromptResponse, ToolContext)


def kit_of(obj: Any) -> Kit:
    """Our classes for llmplex's own objects (or anything unknown); the package's own for weakincentives'."""
    package = type(obj).__module__.split(".")[0]
    if package in ("llmplex", "builtins"):
        return OURS
    try:
        events = importlib.import_module(f"{package}.runtime.events")
        core = importlib.import_module(f"{package}.adapters.core")
        prompt = importlib.import_module(f"{package}.prompt")
        return Kit(
            events.PromptRendered,
            events.PromptExecuted,
            events.ToolInvoked,
            events.TokenUsage,
            core.PromptResponse,
            prompt.ToolContext,
        )
    except (ImportError, AttributeError):
        return OURS


def engine_tool_of(tool: Any) -> Tool[Any, Any]:
    """An llmplex-compat ``Tool`` for any weakincentives-shaped tool (``name``, ``description``,
    ``params_type``, ``handler``)."""
    if isinstance(tool, Tool):
        return tool
    params: Any = getattr(tool, "params_type", None)
    built: Tool[Any, Any] = Tool[params, Any](name=tool.name, description=tool.description, handler=tool.handler)
    return built


def _deadline(value: Any) -> Deadline | None:
    if value is None or isinstance(value, Deadline):
        return value
    twin = object.__new__(Deadline)  # theirs was checked when made: an almost-spent one must not raise here
    object.__setattr__(twin, "expires_at", value.expires_at)
    return twin


def our_budget(budget: Any) -> Budget | None:
    """``budget`` as this module's ``Budget`` (a weakincentives one is read by its fields)."""
    if budget is None or isinstance(budget, Budget):
        return budget
    return Budget(
        deadline=_deadline(getattr(budget, "deadline", None)),
        max_total_tokens=getattr(budget, "max_total_tokens", None),
        max_input_tokens=getattr(budget, "max_input_tokens", None),
        max_output_tokens=getattr(budget, "max_output_tokens", None),
    )


def tracker_of(tracker: Any) -> BudgetTracker | None:
    """``tracker`` as this module's ``BudgetTracker`` (a weakincentives one gets a twin over its budget)."""
    if tracker is None or isinstance(tracker, BudgetTracker):
        return tracker
    budget = our_budget(tracker.budget)
    assert budget is not None
    return BudgetTracker(budget)
