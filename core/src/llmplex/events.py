"""Events delivered to ``llmplex_event`` observers and mirrored as ``logging`` records.

Events are cheap dataclasses built only when some plugin listens. Payloads in
events are already redacted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from pydantic import BaseModel

from llmplex.types import Request, Response, Usage

__all__ = [
    "CallEnded",
    "DeploymentCooled",
    "DeploymentFailed",
    "Dropped",
    "Event",
    "FallbackUsed",
    "Hedged",
    "PromptExecuted",
    "PromptRendered",
    "RequestFailed",
    "RequestStarted",
    "Throttled",
    "ToolInvoked",
    "UsageUnknown",
]


@dataclass(frozen=True)
class Event:
    """Common fields: which request (``request_id``), where it went, which attempt."""

    log_name: ClassVar[str] = "prompt.event"
    log_level: ClassVar[int] = logging.DEBUG

    request_id: str
    provider: str
    model: str
    attempt: int = 1

    def fields(self) -> dict[str, Any]:
        """The event as plain data (what log records carry under ``llmplex``)."""
        data = {item.name: getattr(self, item.name) for item in fields(self)}
        plain = {k: v.model_dump() if isinstance(v, BaseModel) else v for k, v in data.items()}
        return {"event": self.log_name, **plain}


@dataclass(frozen=True)
class RequestStarted(Event):
    """An attempt is about to be formatted and sent."""

    log_name: ClassVar[str] = "prompt.call.start"

    stream: bool = False


@dataclass(frozen=True)
class PromptRendered(Event):
    """The provider payload an attempt will send (secrets redacted)."""

    log_name: ClassVar[str] = "prompt.rendered"

    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Throttled(Event):
    """Core waits ``delay`` seconds before sending attempt ``attempt`` + 1 after a retryable error
    (``reason``: the error's class), or before sending attempt ``attempt`` because a limit of the
    provider instance holds it back (``reason``: ``rate_limit``, ``token_rate_limit``, or
    ``max_concurrency`` with ``delay`` 0 when the wait lasts until a call in flight ends)."""

    log_name: ClassVar[str] = "prompt.throttled"
    log_level: ClassVar[int] = logging.INFO

    delay: float = 0.0
    reason: str = ""


@dataclass(frozen=True)
class PromptExecuted(Event):
    """An answer arrived; ``cached`` when the response cache served it and nothing was sent."""

    log_name: ClassVar[str] = "prompt.call.end"

    usage: Usage = field(default_factory=Usage)
    latency: float = 0.0
    finish_reason: str = ""
    cached: bool = False


@dataclass(frozen=True)
class Dropped(Event):
    """What the provider instance could not honour and core left out of the request before sending it:
    ``drop_unsupported`` items, and reasoning parts of another provider's format (``Response.dropped`` too)."""

    log_name: ClassVar[str] = "prompt.dropped"
    log_level: ClassVar[int] = logging.INFO

    dropped: tuple[str, ...] = ()


@dataclass(frozen=True)
class UsageUnknown(Event):
    """An attempt was sent but its usage is unknown: the provider reported none, or the stream was cut off
    (or abandoned) before it did (``reason`` says which). Each budget of the call counted its reservation
    instead (or what was reported, where more): ``counted`` holds what each one counted."""

    log_name: ClassVar[str] = "prompt.usage_unknown"
    log_level: ClassVar[int] = logging.WARNING

    reason: str = ""
    counted: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class FallbackUsed(Event):
    """``failed_model`` gave up on a retryable error; the call moves on to this event's provider and model."""

    log_name: ClassVar[str] = "prompt.fallback"
    log_level: ClassVar[int] = logging.INFO

    failed_model: str = ""
    error_type: str = ""
    message: str = ""


@dataclass(frozen=True)
class DeploymentCooled(Event):
    """A deployment of model group ``group`` failed ``allowed_fails`` times in a row: it sits out ``seconds``.
    ``provider``/``model`` name the deployment."""

    log_name: ClassVar[str] = "prompt.group.cooled"
    log_level: ClassVar[int] = logging.WARNING

    group: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class DeploymentFailed(Event):
    """An attempt on a deployment of model group ``group`` failed (``error_type``); the call may go on to
    another deployment. ``provider``/``model`` name the deployment."""

    log_name: ClassVar[str] = "prompt.group.failed"
    log_level: ClassVar[int] = logging.INFO

    group: str = ""
    error_type: str = ""
    retryable: bool = False


@dataclass(frozen=True)
class Hedged(Event):
    """A request of model group ``group`` had no first byte after ``delay`` seconds, so it also went to
    ``hedge`` (a deployment's ``prefix:model``); ``provider``/``model`` name the one that answered (or failed
    last). ``hedge_usage`` is what the losing request reported (usually nothing: it was cancelled), counted
    once beside the answer's usage as hedge cost."""

    log_name: ClassVar[str] = "prompt.group.hedged"
    log_level: ClassVar[int] = logging.INFO

    group: str = ""
    hedge: str = ""
    delay: float = 0.0
    won: bool = False
    hedge_usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class RequestFailed(Event):
    """The request failed for good (after retries and fallbacks); ``attempt`` counts every attempt made."""

    log_name: ClassVar[str] = "prompt.error"
    log_level: ClassVar[int] = logging.WARNING

    error_type: str = ""
    message: str = ""
    retryable: bool = False
    gave_up: str = ""


@dataclass(frozen=True)
class ToolInvoked(Event):
    """A tool handler ran inside the tool-calling loop."""

    log_name: ClassVar[str] = "prompt.tool"

    name: str = ""
    arguments: Any = None
    result: Any = None
    error: str | None = None
    duration: float = 0.0


@dataclass(frozen=True)
class CallEnded(Event):
    """A call ended for good, after its retries and fallbacks: with ``response``, or with the error named by
    ``error_type`` (``status`` is ``"ok"`` or ``"error"``). ``provider``/``model`` answered (or failed last);
    ``asked`` is the model as written; ``attempt`` counts every attempt. Recorders (the call log) read the whole
    ``request`` and ``response`` as the call sent and received them, not redacted: a recorder masks what it
    keeps (``llmplex.store`` does). The log record carries only the figures."""

    log_name: ClassVar[str] = "prompt.call.done"

    asked: str = ""
    request: Request | None = None
    response: Response | None = None
    status: str = "ok"
    error_type: str | None = None
    latency: float = 0.0

    def fields(self) -> dict[str, Any]:
        """The figures only: no prompt, no answer."""
        usage = self.response.usage.model_dump() if self.response is not None else None
        return {
            "event": self.log_name,
            "request_id": self.request_id,
            "provider": self.provider,
            "model": self.model,
            "asked": self.asked,
            "attempt": self.attempt,
            "status": self.status,
            "error_type": self.error_type,
            "latency": self.latency,
            "usage": usage,
        }
