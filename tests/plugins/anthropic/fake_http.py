"""A fake network under the official SDKs, which both send through ``httpx2``.

``respx`` and ``pytest-httpx`` patch ``httpx`` only, and the anthropic and
google-genai SDKs moved to its fork ``httpx2``; this fixture patches the
default ``httpx2`` transports the same way, so the SDK builds, sends and reads
real HTTP messages and only the socket is replaced.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest

__all__ = ["FakeHTTP", "Sent", "fake_http", "sse"]


@dataclass(frozen=True)
class Sent:
    """One request that reached the fake network."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        """The request body decoded from JSON."""
        return json.loads(self.body)


def sse(events: Sequence[tuple[str | None, Mapping[str, Any]]]) -> bytes:
    """A server-sent-events body; an event name of ``None`` writes a data-only event."""
    lines = []
    for name, data in events:
        if name is not None:
            lines.append(f"event: {name}")
        lines.append(f"data: {json.dumps(data)}")
        lines.append("")
    return ("\n".join(lines) + "\n").encode()


@dataclass
class FakeHTTP:
    """Queued answers (first in, first out) and the requests that took them."""

    answers: deque[httpx2.Response | Exception] = field(default_factory=deque)
    sent: list[Sent] = field(default_factory=list)

    def reply(
        self,
        status: int = 200,
        *,
        json_body: Any = None,
        text: str | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        """Queue one HTTP answer."""
        if json_body is not None:
            content = json.dumps(json_body).encode()
        elif text is not None:
            content = text.encode()
        all_headers = {"content-type": content_type, **(headers or {})}
        self.answers.append(httpx2.Response(status, headers=all_headers, content=content or b""))

    def reply_stream(self, body: bytes, *, headers: Mapping[str, str] | None = None) -> None:
        """Queue one ``text/event-stream`` answer."""
        self.reply(200, content=body, headers=headers, content_type="text/event-stream")

    def fail(self, error: Exception) -> None:
        """Queue a transport failure (connection refused, read timeout, ...)."""
        self.answers.append(error)

    def last(self) -> Sent:
        """The most recent request."""
        assert self.sent, "no request reached the fake network"
        return self.sent[-1]

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        """Record ``request`` and give the next queued answer."""
        body = request.read()
        self.sent.append(Sent(request.method, str(request.url), dict(request.headers), body))
        if not self.answers:
            raise AssertionError(f"unexpected request {request.method} {request.url}: nothing queued")
        answer = self.answers.popleft()
        if isinstance(answer, Exception):
            raise answer
        return httpx2.Response(answer.status_code, headers=answer.headers, content=answer.content, request=request)


@pytest.fixture
def fake_http(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHTTP]:
    """Replace the network of every ``httpx2`` client (sync and async) for one test."""
    fake = FakeHTTP()

    def handle(self: httpx2.HTTPTransport, request: httpx2.Request) -> httpx2.Response:
        return fake.answer(request)

    async def handle_async(self: httpx2.AsyncHTTPTransport, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        return fake.answer(request)

    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", handle)
    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", handle_async)
    yield fake
    assert not fake.answers, f"{len(fake.answers)} queued answer(s) were never requested"
