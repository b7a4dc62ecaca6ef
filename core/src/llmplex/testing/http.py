"""Fake transports for HTTP-based provider plugins, on top of ``respx`` (install ``llmplex[testing]``).

with respx.mock(base_url="https://api.example.com") as router:
    fake = HTTPFake(router.post("/v1/chat"))
    fake.push(httpx.Response(200, json={...}))
    ...                      # the SDK under test calls the endpoint
    fake.bodies              # the JSON bodies it sent
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

import httpx
import respx

__all__ = ["HTTPFake", "sse_response"]


class HTTPFake:
    """One or more faked routes sharing a queue of answers; records every request they receive."""

    def __init__(self, *routes: respx.Route) -> None:
        self.requests: list[httpx.Request] = []
        self._answers: deque[httpx.Response | Exception] = deque()
        self._lock = threading.Lock()
        for route in routes:
            route.side_effect = self._answer

    def push(self, answer: httpx.Response | Exception) -> None:
        """Queue the answer to the next request: a response, or an exception to raise (``httpx.ConnectError``)."""
        with self._lock:
            self._answers.append(answer)

    @property
    def bodies(self) -> list[Any]:
        """The request bodies received, decoded from JSON where they are JSON."""
        decoded: list[Any] = []
        for request in self.requests:
            try:
                decoded.append(json.loads(request.content))
            except ValueError:
                decoded.append(request.content.decode("utf-8", "replace"))
        return decoded

    def _answer(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.requests.append(request)
            if not self._answers:
                raise AssertionError(f"the fake has no answer queued for {request.method} {request.url}")
            answer = self._answers.popleft()
        if isinstance(answer, Exception):
            raise answer
        return answer


def sse_response(
    events: Iterable[Mapping[str, Any] | tuple[str, Mapping[str, Any]] | str], status: int = 200
) -> httpx.Response:
    """A ``text/event-stream`` response; each item is JSON data, an ``(event, data)`` pair, or raw data text."""
    lines: list[str] = []
    for item in events:
        if isinstance(item, tuple):
            name, data = item
            lines.append(f"event: {name}\ndata: {json.dumps(data)}\n\n")
        elif isinstance(item, str):
            lines.append(f"data: {item}\n\n")
        else:
            lines.append(f"data: {json.dumps(item)}\n\n")
    return httpx.Response(status, headers={"content-type": "text/event-stream"}, content="".join(lines).encode())
