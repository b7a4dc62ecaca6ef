"""weakincentives' session telemetry: the events an evaluation publishes and the dispatcher delivering them."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar, cast
from uuid import UUID, uuid4

__all__ = [
    "DispatchResult",
    "EventHandler",
    "HandlerFailure",
    "InProcessDispatcher",
    "PromptExecuted",
    "PromptRendered",
    "TokenUsage",
    "ToolInvoked",
]

logger = logging.getLogger("llmplex.compat.weakincentives")

EventHandler = Callable[[object], None]
E = TypeVar("E")


@dataclass(frozen=True)
class TokenUsage:
    """Tokens one evaluation consumed (``None`` when the provider did not say)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None

    @property
    def total_tokens(self) -> int | None:
        """Input plus output, or ``None`` when neither is known."""
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)


@dataclass(frozen=True)
class PromptRendered:
    """Published after the prompt is rendered, before the provider is called."""

    prompt_ns: str
    prompt_key: str
    prompt_name: str | None
    adapter: str
    session_id: UUID | None
    render_inputs: tuple[Any, ...]
    rendered_prompt: str
    created_at: datetime
    descriptor: Any = None
    event_id: UUID = field(default_factory=uuid4)


@dataclass(frozen=True)
class PromptExecuted:
    """Published once the answer is parsed; ``result`` is the ``PromptResponse``."""

    prompt_name: str
    adapter: str
    result: Any
    session_id: UUID | None
    created_at: datetime
    usage: TokenUsage | None = None
    event_id: UUID = field(default_factory=uuid4)


@dataclass(frozen=True)
class ToolInvoked:
    """Published after a tool handler ran; ``result`` is its ``ToolResult``."""

    prompt_name: str
    adapter: str
    name: str
    params: Any
    result: Any
    session_id: UUID | None
    created_at: datetime
    usage: TokenUsage | None = None
    rendered_output: str = ""
    call_id: str | None = None
    event_id: UUID = field(default_factory=uuid4)


@dataclass(frozen=True)
class HandlerFailure:
    """A handler that raised while an event was delivered."""

    handler: EventHandler
    error: BaseException


@dataclass(frozen=True)
class DispatchResult:
    """Which handlers saw an event and which of them failed."""

    event: object
    handlers_invoked: tuple[EventHandler, ...]
    errors: tuple[HandlerFailure, ...]

    @property
    def handled_count(self) -> int:
        """How many handlers the event was delivered to."""
        return len(self.handlers_invoked)

    @property
    def ok(self) -> bool:
        """Whether no handler failed."""
        return not self.errors


class InProcessDispatcher:
    """Delivers each event synchronously to the handlers subscribed to its exact type.

    A handler that raises is logged and reported in the ``DispatchResult``; the
    other handlers still run, and the evaluation goes on.
    """

    def __init__(self) -> None:
        self._handlers: dict[type[object], list[EventHandler]] = {}
        self._lock = threading.RLock()

    def subscribe(self, event_type: type[E], handler: Callable[[E], None]) -> None:
        """Call ``handler(event)`` for every event of ``event_type``."""
        with self._lock:
            self._handlers.setdefault(event_type, []).append(cast(EventHandler, handler))

    def unsubscribe(self, event_type: type[E], handler: Callable[[E], None]) -> bool:
        """Stop delivering ``event_type`` to ``handler``; ``False`` if it was not subscribed."""
        with self._lock:
            handlers = self._handlers.get(event_type, [])
            if handler not in handlers:
                return False
            handlers.remove(handler)
            return True

    def dispatch(self, event: object) -> DispatchResult:
        """Deliver ``event`` to its type's handlers, in subscription order."""
        with self._lock:
            handlers = tuple(self._handlers.get(type(event), ()))
        failures: list[HandlerFailure] = []
        for handler in handlers:
            try:
                handler(event)
            except Exception as error:
                logger.warning(
                    "event handler %s failed on %s: %s: %s",
                    getattr(handler, "__qualname__", repr(handler)),
                    type(event).__name__,
                    type(error).__name__,
                    error,
                )
                failures.append(HandlerFailure(handler, error))
        return DispatchResult(event, handlers, tuple(failures))
