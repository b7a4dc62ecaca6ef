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

from llmplex.compat.weakincentives.events import ToolInvoked
from llmplex.compat.weakincentives.tools import Tool, ToolResult

if TYPE_CHECKING:
    from llmplex.compat.weakincentives.budget import BudgetTracker, Deadline
    from llmplex.compat.weakincentives.prompt import Prompt, PromptResources, RenderedPrompt
    from llmplex.compat.weakincentives.session import Session

__all__ = ["ToolContext", "run_tool"]

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


def run_tool(
    tool: Tool[Any, Any],
    arguments: Mapping[str, Any],
    context: ToolContext,
    adapter_name: str,
    prompt_name: str,
) -> str:
    """Run ``tool`` for one call, publish ``ToolInvoked``, and return the message for the model."""
    params: Any = None
    try:
        params = tool.parse_params(arguments)
        if tool.handler is None:
            result: ToolResult[Any] = ToolResult.error(f"tool {tool.name!r} has no handler")
        else:
            returned: Any = tool.handler(params, context=context)
            result = returned
            if not isinstance(returned, ToolResult):
                result = ToolResult.error(f"tool {tool.name!r} returned {type(returned).__name__}, not a ToolResult")
    except Exception as exc:
        logger.warning("tool %s failed: %s: %s", tool.name, type(exc).__name__, exc)
        result = ToolResult.error(f"{type(exc).__name__}: {exc}")
    message = result.tool_message()
    context.session.dispatcher.dispatch(
        ToolInvoked(
            prompt_name=prompt_name,
            adapter=adapter_name,
            name=tool.name,
            params=params,
            result=result,
            session_id=context.session.session_id,
            created_at=datetime.now(UTC),
            rendered_output=message,
        )
    )
    return message
