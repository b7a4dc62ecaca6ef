"""Fake OpenAI at the HTTP layer (respx under the real SDK), with spec-validated replies.

Every reply a test mounts is checked against the vendored OpenAPI spec first, so
the fixtures cannot drift from the real wire format.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

import llmplex
from tests.contract.openapi import validate_openai

OPENAI_URL = "https://api.openai.com/v1"
LOCAL_URL = "http://127.0.0.1:8931/v1"
API_KEY = "sk-test-4f9a8b7c6d5e4f3a2b1c"
LOCAL_PROVIDER = {"plugin": "openai", "base_url": LOCAL_URL, "api": "chat"}

_JSON_SCHEMA = {"/chat/completions": "CreateChatCompletionResponse", "/responses": "Response"}
_EVENT_SCHEMA = {"/chat/completions": "CreateChatCompletionStreamResponse", "/responses": "ResponseStreamEvent"}


class FakeAPI:
    """Scripted replies per path of one base URL; the requests it received."""

    def __init__(self, router: respx.MockRouter, base_url: str) -> None:
        self.base_url = base_url
        self._router = router
        self._replies: dict[tuple[str, str], list[httpx.Response]] = {}

    def reply(self, path: str, body: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> None:
        """Queue a JSON reply to ``POST path`` (validated: the success schema, or ErrorResponse)."""
        validate_openai(_JSON_SCHEMA[path] if status < 400 else "ErrorResponse", body)
        self._queue("POST", path, httpx.Response(status, json=body, headers=headers))

    def stream(self, path: str, items: list[Any], *, done: bool = True) -> None:
        """Queue an SSE reply: chunks (``data:`` only, then ``[DONE]``) or named Responses API events."""
        frames = []
        for item in items:
            if "error" in item:
                validate_openai("ErrorResponse", item)
            else:
                validate_openai(_EVENT_SCHEMA[path], item)
            event = f"event: {item['type']}\n" if path == "/responses" else ""
            frames.append(f"{event}data: {json.dumps(item)}\n\n")
        if done and path == "/chat/completions":
            frames.append("data: [DONE]\n\n")
        body = "".join(frames).encode()
        self._queue("POST", path, httpx.Response(200, content=body, headers={"content-type": "text/event-stream"}))

    def raw(self, method: str, path: str, response: httpx.Response) -> None:
        """Queue any reply (for malformed bodies and non-JSON answers)."""
        self._queue(method, path, response)

    def fail(self, path: str, error: Exception) -> None:
        """Make the next ``POST path`` raise a transport error (timeout, connection refused)."""
        self._router.post(self.base_url + path).mock(side_effect=error)

    def _queue(self, method: str, path: str, response: httpx.Response) -> None:
        replies = self._replies.setdefault((method, path), [])
        if not replies:
            self._router.route(method=method, url=self.base_url + path).mock(side_effect=lambda _: self._next(replies))
        replies.append(response)

    @staticmethod
    def _next(replies: list[httpx.Response]) -> httpx.Response:
        return replies.pop(0) if len(replies) > 1 else replies[0]

    @property
    def requests(self) -> list[httpx.Request]:
        """Every request this base URL received, in order."""
        return [call.request for call in self._router.calls if str(call.request.url).startswith(self.base_url)]

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of :attr:`requests`."""
        return [json.loads(request.content) for request in self.requests]


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    """respx under the real SDK; any unmocked request fails the test."""
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as mocked:
        yield mocked


@pytest.fixture
def openai_api(router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch) -> FakeAPI:
    """``https://api.openai.com/v1`` faked, with ``OPENAI_API_KEY`` set."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    return FakeAPI(router, OPENAI_URL)


@pytest.fixture
def local_api(router: respx.MockRouter) -> FakeAPI:
    """A keyless OpenAI-compatible server at ``LOCAL_URL`` faked."""
    return FakeAPI(router, LOCAL_URL)


@pytest.fixture
def llm() -> llmplex.Client:
    """A client without retries whose ``local:`` prefix is an openai-plugin instance on ``LOCAL_URL``."""
    return llmplex.Client(providers={"local": LOCAL_PROVIDER}, throttle={"max_attempts": 1})
