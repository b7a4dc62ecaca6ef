"""The keyword arguments every call (complete, stream, ...) accepts, typed once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from llmplex.engine.request_builder import ToolInput
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.throttle import ThrottlePolicy

__all__ = ["CallArgs"]


class CallArgs(TypedDict, total=False):
    """Keyword arguments of :meth:`llmplex.Client.complete` and its siblings.

    Attributes:
        system: a system prompt placed before the messages.
        tools: ``Tool`` objects or ``{"name", "description", "parameters"}`` dicts.
        tool_choice: ``"auto"``, ``"none"``, ``"required"`` or one tool's name.
        timeout: seconds until the deadline (default: config ``timeout``).
        deadline: an absolute :class:`~llmplex.reliability.deadline.Deadline`.
        throttle: a retry policy for this call.
        provider_options: passed through to the provider's payload untouched.
        previous_response_id: continue a stored response chain (where supported).
        temperature, max_tokens, top_p, presence_penalty, frequency_penalty, stop, seed:
            sampling options; only those given reach the wire.
    """

    system: str | None
    tools: Sequence[ToolInput] | None
    tool_choice: str | None
    timeout: float | None
    deadline: Deadline | None
    throttle: ThrottlePolicy | None
    provider_options: Mapping[str, Any] | None
    previous_response_id: str | None
    temperature: float | None
    max_tokens: int | None
    top_p: float | None
    presence_penalty: float | None
    frequency_penalty: float | None
    stop: Sequence[str] | None
    seed: int | None
