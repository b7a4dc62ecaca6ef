"""What every API translation produces and consumes: one call to make, and a stream's encoder."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from llmplex.gateway.errors import GatewayError
from llmplex.types import Message, Response, StreamEvent

__all__ = ["CallSpec", "StreamEncoder", "sse"]


@dataclass
class CallSpec:
    """One call a request asks for: the model as the client named it, the messages, ``Client`` keyword arguments."""

    model: str
    messages: list[Message]
    kwargs: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    include_usage: bool = False


class StreamEncoder(Protocol):
    """Turns a stream's events into the server-sent events of one API."""

    def encode(self, event: StreamEvent) -> bytes:
        """The SSE bytes for ``event`` (empty when it adds nothing on this API's wire)."""
        ...

    def fail(self, error: GatewayError) -> bytes:
        """The SSE bytes that end a stream which failed after its headers were sent."""
        ...


def sse(data: bytes, event: str | None = None) -> bytes:
    """One server-sent event: ``data`` (a single line of JSON), optionally named."""
    head = b"event: " + event.encode() + b"\n" if event else b""
    return head + b"data: " + data + b"\n\n"


def final_response(event: StreamEvent) -> Response | None:
    """The whole answer a stream's last event carries, if ``event`` is it."""
    return event.response if event.type == "response" else None
