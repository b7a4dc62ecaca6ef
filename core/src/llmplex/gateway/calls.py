"""What every API translation produces and consumes: one call to make, and a stream's encoder."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from llmplex.gateway.errors import GatewayError
from llmplex.types import Message, Response, StreamEvent
from llmplex.types.messages import checked_message

__all__ = ["CallSpec", "StreamEncoder", "assistant_text", "sse", "text_message"]

_TEXT_SET = frozenset({"role", "content"})
_CACHE_SET = _TEXT_SET | {"cache"}
_ASSISTANT_SET = _TEXT_SET | {"tool_calls", "reasoning"}


@dataclass
class CallSpec:
    """One call a request asks for: the model as the client named it, the messages, ``Client`` keyword arguments.

    ``dropped`` names what the gateway left out as a hint (it changes only cost or speed; the answer's
    ``x-llmplex-dropped`` header lists it); ``unsupported`` names what would change the answer and the
    gateway cannot carry: refused with a 400 unless the routed provider drops unsupported things.
    ``openai_options`` are hints OpenAI's own APIs take (``prompt_cache_key``...): carried to them, named as
    dropped elsewhere. ``privacy`` holds ``store`` and ``include``: carried, or the request is refused.
    ``custom_tools`` names the Responses API's custom (freeform) tools sent as function tools with one string
    argument, ``namespaces`` the namespace of each tool a namespace tool declared: answers give their calls back
    in those shapes. ``builtin_tools`` are the provider-run tools a request declared (web search), each with
    where: carried to OpenAI's Responses API, which runs them, named as dropped elsewhere.
    """

    model: str
    messages: list[Message]
    kwargs: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    include_usage: bool = False
    dropped: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    openai_options: dict[str, Any] = field(default_factory=dict)
    privacy: dict[str, Any] = field(default_factory=dict)
    custom_tools: set[str] = field(default_factory=set)
    namespaces: dict[str, str] = field(default_factory=dict)
    builtin_tools: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


class StreamEncoder(Protocol):
    """Turns a stream's events into the server-sent events of one API."""

    def encode(self, event: StreamEvent) -> bytes:
        """The SSE bytes for ``event`` (empty when it adds nothing on this API's wire)."""
        ...

    def fail(self, error: GatewayError) -> bytes:
        """The SSE bytes that end a stream which failed after its headers were sent."""
        ...


def text_message(role: Literal["system", "user"], text: str, cache: bool | None = None) -> Message:
    """``Message(role=role, content=text)`` (``Message.system`` or ``Message.user(text, cache=cache)`` when
    ``cache`` is given), built without pydantic's validation: ``text`` is a string the API's request model
    validated. Equal to the validated message in every way (fields, fields set, ``==``, dump)."""
    if cache is None:
        return checked_message({"role": role, "content": text}, _TEXT_SET)
    return checked_message({"role": role, "content": text, "cache": cache}, _CACHE_SET)


def assistant_text(text: str | None) -> Message:
    """``Message.assistant(text)`` (no tool calls, no reasoning), built as ``text_message`` builds its turns."""
    return checked_message({"role": "assistant", "content": text}, _ASSISTANT_SET)


def sse(data: bytes, event: str | None = None) -> bytes:
    """One server-sent event: ``data`` (a single line of JSON), optionally named."""
    head = b"event: " + event.encode() + b"\n" if event else b""
    return head + b"data: " + data + b"\n\n"


def final_response(event: StreamEvent) -> Response | None:
    """The whole answer a stream's last event carries, if ``event`` is it."""
    return event.response if event.type == "response" else None
