"""The vocabulary of a fault script: what the fault server does with one request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tests.contract import fixtures_openai as fx

Kind = Literal["ok", "json", "hang", "reset", "malformed", "cut", "stall", "trickle", "trickle_head", "held"]

UNEXPECTED_SHAPE: fx.Json = {"object": "list", "data": [], "has_more": False}
DEFAULT_USAGE = fx.TokenUsage()
MALFORMED_JSON = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"index": 0, "mess'
MALFORMED_EVENT = b"data: " + MALFORMED_JSON + b"\n\n"


@dataclass(frozen=True)
class Fault:
    """One scripted reply; build it with the class methods, not the constructor.

    ``ok`` answers in the OpenAI wire format of the requested endpoint (JSON, or
    SSE when the request has ``"stream": true``) with ``text`` and ``usage``.
    ``cut`` and ``stall`` send ``after_events`` SSE events (or half the JSON body
    of a non-streaming request) and then close, or go silent for ``seconds``.
    ``trickle`` sends the headers at once and then the body one byte every
    ``seconds``; ``trickle_head`` trickles the status line and headers too.
    """

    kind: Kind
    status: int = 200
    body: fx.Json = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()
    text: str = "Hello! How can I help?"
    usage: fx.TokenUsage = DEFAULT_USAGE
    seconds: float = 0.0
    after_events: int = 2

    @classmethod
    def ok(cls, text: str = "Hello! How can I help?", usage: fx.TokenUsage = DEFAULT_USAGE) -> Fault:
        """A successful completion with this text and these token counts."""
        return cls("ok", text=text, usage=usage)

    @classmethod
    def json(cls, status: int, body: fx.Json, headers: dict[str, str] | None = None) -> Fault:
        """Any JSON reply, e.g. ``Fault.json(400, fx.context_length_exceeded_error())``."""
        return cls("json", status=status, body=body, headers=tuple((headers or {}).items()))

    @classmethod
    def rate_limit(cls, retry_after: float | None = None, retry_after_ms: float | None = None) -> Fault:
        """429 ``rate_limit_exceeded`` with ``Retry-After`` (seconds) and/or ``retry-after-ms``."""
        headers = {"x-ratelimit-limit-tokens": "200000", "x-ratelimit-remaining-tokens": "0"}
        if retry_after is not None:
            headers["retry-after"] = f"{retry_after:g}"
        if retry_after_ms is not None:
            headers["retry-after-ms"] = f"{retry_after_ms:g}"
        return cls.json(429, fx.rate_limit_error(), headers)

    @classmethod
    def quota(cls) -> Fault:
        """429 ``insufficient_quota``: billing exhausted, not worth retrying."""
        return cls.json(429, fx.insufficient_quota_error())

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        """A 5xx (500, 502, 503, 529, ...) with an OpenAI error body."""
        return cls.json(status, fx.server_error(status))

    @classmethod
    def unexpected_shape(cls) -> Fault:
        """200 with valid JSON that is not a completion."""
        return cls.json(200, UNEXPECTED_SHAPE)

    @classmethod
    def hang(cls, seconds: float = 5.0) -> Fault:
        """Say nothing for ``seconds`` (longer than the client timeout), then close."""
        return cls("hang", seconds=seconds)

    @classmethod
    def reset(cls) -> Fault:
        """Read the request, then reset the connection (RST) without answering."""
        return cls("reset")

    @classmethod
    def malformed_json(cls) -> Fault:
        """200 with a body that is not valid JSON (in a stream: one good event, then a broken one)."""
        return cls("malformed")

    @classmethod
    def truncated(cls) -> Fault:
        """Content-Length of the whole body, half of it sent, then close."""
        return cls("cut", after_events=0)

    @classmethod
    def held(cls, text: str = "Hello! How can I help?", usage: fx.TokenUsage = DEFAULT_USAGE) -> Fault:
        """Silent until the test calls ``FaultServer.release()`` (or the server stops), then ``ok``: an answer
        that starts exactly when the test says, whatever the machine's load."""
        return cls("held", text=text, usage=usage)

    @classmethod
    def stream_cut(cls, after_events: int = 2) -> Fault:
        """Stream ``after_events`` events, then close mid-stream (no final chunk)."""
        return cls("cut", after_events=after_events)

    @classmethod
    def stream_stall(cls, after_events: int = 2, seconds: float = 5.0) -> Fault:
        """Stream ``after_events`` events, then go silent for ``seconds`` and close."""
        return cls("stall", after_events=after_events, seconds=seconds)

    @classmethod
    def trickle(cls, interval: float = 0.3) -> Fault:
        """Headers at once, then the body (JSON, or SSE when streaming) one byte every ``interval`` seconds.

        Every read returns within ``interval``, so a per-read timeout never fires: only a
        bound on the whole response ends the call.
        """
        return cls("trickle", seconds=interval)

    @classmethod
    def trickle_headers(cls, interval: float = 0.3) -> Fault:
        """The status line and headers themselves one byte every ``interval`` seconds."""
        return cls("trickle_head", seconds=interval)
