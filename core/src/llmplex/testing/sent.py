"""What a plugin put on the wire, read back into provider-neutral terms.

A conformance test class turns each request its fake transport received into a
``SentRequest`` (``read_request``); the kit then checks the request's shape
without knowing the provider's wire format: the system prompt sent as a system
prompt, every turn with its role, tool results carrying their call ids, options
under the right names, the stream flag.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["OPTION_NAMES", "SentMessage", "SentRequest", "SentTool", "SentToolCall", "json_arguments"]

OPTION_NAMES = ("temperature", "top_p", "max_tokens", "presence_penalty", "frequency_penalty", "stop", "seed")
"""The core option names ``SentRequest.options`` uses, whatever the provider calls them."""


def json_arguments(arguments: Any) -> Any:
    """Tool-call arguments as data: JSON text is decoded, anything else is kept as it is.

    A plugin that sent the arguments as a JSON *string* inside a provider field that
    takes an object shows up as a string here, and the kit's comparison fails.
    """
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


@dataclass(frozen=True)
class SentToolCall:
    """A tool call the conversation carries (an assistant turn asked for it)."""

    id: str | None
    name: str
    arguments: Any
    """The arguments as the provider's wire holds them, decoded from JSON text when they are text."""


@dataclass(frozen=True)
class SentMessage:
    """One turn of the conversation sent; ``role`` is core's (the provider's ``model`` is ``assistant``)."""

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    tool_calls: tuple[SentToolCall, ...] = ()
    tool_call_id: str | None = None
    """For ``tool`` turns: the id of the call this result answers."""
    name: str | None = None
    """For ``tool`` turns: the tool's name, when the wire carries it."""


@dataclass(frozen=True)
class SentTool:
    """A tool definition sent."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SentRequest:
    """One request as the provider received it, in core's terms.

    ``system`` holds the system prompts sent *as system prompts* (a top-level field,
    a system-role message, ``instructions``...); a system prompt sent as a user turn
    is in ``messages``. ``options`` uses core's option names (``OPTION_NAMES``)
    for whatever the provider calls them (``stop_sequences`` is ``stop``,
    ``max_output_tokens`` is ``max_tokens``); ``stop`` is a list.
    ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"``, a tool's name, or
    ``None`` when not sent. ``stream`` says whether a streamed answer was asked for
    (a body flag or the endpoint). ``output_schema`` is the JSON Schema of a native
    structured-output request.
    """

    model: str | None = None
    system: tuple[str, ...] = ()
    messages: tuple[SentMessage, ...] = ()
    tools: tuple[SentTool, ...] = ()
    tool_choice: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    stream: bool = False
    output_schema: Mapping[str, Any] | None = None
    raw: Any = field(default=None, repr=False, compare=False)
    """The body as received, for messages that show it."""

    def roles(self) -> list[str]:
        """The roles of the turns, in order."""
        return [m.role for m in self.messages]

    def tool_results(self) -> list[SentMessage]:
        """The ``tool`` turns, in order."""
        return [m for m in self.messages if m.role == "tool"]

    def calls(self) -> list[SentToolCall]:
        """Every tool call the assistant turns carry, in order."""
        return [call for m in self.messages for call in m.tool_calls]
