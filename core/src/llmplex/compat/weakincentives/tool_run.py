"""weakincentives' ``ToolContext`` and running one tool call: a handler that raises or returns
``success=False`` tells the model so and the evaluation goes on; every call publishes ``ToolInvoked``.

It sits above both ``tools`` and ``prompt`` (the context holds the prompt, whose sections hold tools).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from llmplex.compat.weakincentives.errors import ToolPhaseError
from llmplex.compat.weakincentives.events import ToolInvoked
from llmplex.compat.weakincentives.tools import Tool, ToolResult, render_tool_payload
from llmplex.tooling.runner import current_tool_call

if TYPE_CHECKING:
    from llmplex.compat.weakincentives.budget import BudgetTracker, Deadline
    from llmplex.compat.weakincentives.prompt import Prompt, PromptResources, RenderedPrompt
    from llmplex.compat.weakincentives.session import Session

__all__ = ["ToolContext", "run_tool", "tool_message"]

logger = logging.getLogger("llmplex.compat.weakincentives")


@dataclass(frozen=True)
class ToolContext:
    """What a handler can reach: the prompt (and its resources), the adapter, the session, the deadline."""

    prompt: Prompt[Any]
    rendered_prompt: RenderedPrompt[Any] | None
    adapter: Any
    session: Session
    deadline: Deadline | None = None
    budget_tracker: BudgetTracker | None = None

    @property
    def resources(self) -> PromptResources:
        """The prompt's resources (``context.resources.get(Type)``)."""
        return self.prompt.resources


def tool_message(result: Any) -> str:
    """What the model is sent back for any ``ToolResult``-shaped result: the message, then the rendered value."""
    if isinstance(result, ToolResult):
        return result.tool_message()
    message = str(getattr(result, "message", "") or "")
    rendered = "" if getattr(result, "exclude_value_from_context", False) else render_tool_payload(result.value)
    if rendered and message:
        return f"{message}\n\n{rendered}"
    return rendered or message


def _snapshot(session: Any, tag: str) -> Any:
    """The session's state before a tool runs, or ``None`` when it keeps none (or cannot say)."""
    take = getattr(session, "snapshot", None)
    if not callable(take):
        return None
    try:
        return take(tag=tag)
    except Exception as exc:
        logger.warning("no session snapshot before tool %s: %s: %s", tag, type(exc).__name__, exc)
        return None


def _restore(session: Any, snapshot: Any, tag: str) -> None:
    if snapshot is None:
        return
    try:
        session.restore(snapshot)
    except Exception as exc:
        logger.warning("session state after failed tool %s not restored: %s: %s", tag, type(exc).__name__, exc)


def _call_id() -> str | None:
    """The id of the call llmplex's tool loop is running (weakincentives put it on ``ToolInvoked.call_id``)."""
    call = current_tool_call.get()
    return call.id if call is not None else None


def _failure_message(name: str, error: Exception) -> str:
    """What weakincentives told the model about a handler that raised."""
    if type(error).__name__ == "ToolValidationError":
        return f"Tool validation failed: {error}"
    if isinstance(error, TypeError):
        return f"Tool '{name}' raised TypeError: {error}"
    return f"Tool '{name}' execution failed: {error}"


def run_tool(
    tool: Tool[Any, Any],
    arguments: Mapping[str, Any],
    context: Any,
    adapter_name: str,
    prompt_name: str,
    tool_invoked: Any = ToolInvoked,
) -> str:
    """Run ``tool`` for one call, publish ``tool_invoked`` (the event class), and return the message for the model.

    ``context`` is the ``ToolContext`` the handler gets (the tool's own package's class).
    The call is a transaction on the session's state: a handler that raises or
    returns ``success=False`` leaves the slices as they were before it ran.
    """
    params: Any = None
    if tool.handler is None:  # weakincentives ends the evaluation here rather than telling the model
        raise ToolPhaseError(f"Tool '{tool.name}' does not have a registered handler.")
    snapshot = _snapshot(context.session, tool.name)
    try:
        params = tool.parse_params(arguments)
        result: Any = tool.handler(params, context=context)
        if not all(hasattr(result, name) for name in ("message", "value", "success")):
            result = ToolResult.error(f"tool {tool.name!r} returned {type(result).__name__}, not a ToolResult")
    except Exception as exc:
        logger.warning("tool %s failed: %s: %s", tool.name, type(exc).__name__, exc)
        result = ToolResult.error(_failure_message(tool.name, exc))
    if not getattr(result, "success", False):
        _restore(context.session, snapshot, tool.name)
    message = tool_message(result)
    context.session.dispatcher.dispatch(
        tool_invoked(
            prompt_name=prompt_name,
            adapter=adapter_name,
            name=tool.name,
            params=params,
            result=result,
            session_id=getattr(context.session, "session_id", None),
            created_at=datetime.now(UTC),
            rendered_output=message,
            call_id=_call_id(),
        )
    )
    return message
