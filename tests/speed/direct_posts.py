"""Issue 34 item 3: the timeouts each direct post was handed, for tests that a plugin keeps its client's own."""

from __future__ import annotations

from typing import Any

import pytest
from llmplex_openai import lean

from llmplex.http.direct import DirectSender


def spy_direct_posts(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The timeouts of every ``DirectSender.post`` from now on; a context manager around the post fails the test."""
    posted: list[Any] = []
    post = DirectSender.post

    async def spy(self: DirectSender, url: str, headers: Any, body: bytes, timeout: Any, request: Any) -> Any:
        posted.append(timeout)
        return await post(self, url, headers, body, timeout, request)

    def refused(http: object, request: Any) -> Any:
        raise AssertionError("a context manager around the direct post")

    monkeypatch.setattr(DirectSender, "post", spy)
    monkeypatch.setattr(lean, "_sdk_errors", refused)
    return posted
