"""Issue 34 item 5: what a stream's way to its first chunk builds per request, and what it builds once.

Two things were made again for every request on the way to a stream's first chunk: the responder of the API
route (a ``partial`` of ``_respond`` and the route's endpoint, made in ``_Gateway.__call__``) and the stream's
fixed headers (``content-type``, ``cache-control``, ``x-accel-buffering``: a dict merged into the request's
headers, then each name and value encoded). Now each route's responder is made once, when the application is
built, and the fixed headers are ``_STREAM_HEAD``, encoded once; the request's own headers (its id, the gateway's
overhead, what was dropped) still follow them on every answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from llmplex.gateway import app as gateway_app
from llmplex.gateway import pipeline as gateway_pipeline
from tests.gateway.harness import MASTER_KEY, Gateway, gateway_config
from tests.gateway.keyed_support import bearer
from tests.tenancy.guard_support import guarded_gateway

ECHO = {"model": "mock:echo", "messages": [{"role": "user", "content": "hello"}]}
STREAM = {**ECHO, "stream": True}


@pytest.fixture(scope="module")
def gateway() -> Iterator[Gateway]:
    with guarded_gateway(gateway_config()) as running:
        yield running


def _post_all(gateway: Gateway) -> list[httpx.Response]:
    """A whole answer and a stream on each API route that streams, read to their ends."""
    answers = []
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        answers.append(http.post("/v1/chat/completions", json=ECHO, headers=bearer(MASTER_KEY)))
        for path, body in (
            ("/v1/chat/completions", STREAM),
            ("/v1/messages", {**STREAM, "max_tokens": 10}),
            ("/v1/responses", {"model": "mock:echo", "input": "hello", "stream": True}),
        ):
            with http.stream("POST", path, json=body, headers=bearer(MASTER_KEY)) as streamed:
                streamed.read()
            answers.append(streamed)
    return answers


def test_item_5_gateway_route_responders_are_made_once_not_per_request(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Any] = []
    real = gateway_app.partial

    def counting(*args: Any, **kwargs: Any) -> Any:
        made.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(gateway_app, "partial", counting)
    answers = _post_all(gateway)
    assert [answer.status_code for answer in answers] == [200, 200, 200, 200]
    assert made == []  # no responder (nor anything else) made by partial while serving


def test_item_5_gateway_stream_fixed_headers_are_encoded_once(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stream's fixed headers are the module's ``_STREAM_HEAD`` (a marker put there shows on the answers),
    followed by the request's own."""
    marked = (*gateway_pipeline._STREAM_HEAD, (b"x-test-stream-head", b"once"))
    monkeypatch.setattr(gateway_pipeline, "_STREAM_HEAD", marked)
    answers = _post_all(gateway)
    whole, streams = answers[0], answers[1:]
    assert "x-test-stream-head" not in whole.headers
    for answer in streams:
        assert answer.status_code == 200, answer.request.url
        headers = answer.headers
        assert headers["x-test-stream-head"] == "once"
        assert headers["content-type"] == "text/event-stream; charset=utf-8"
        assert headers["cache-control"] == "no-cache" and headers["x-accel-buffering"] == "no"
        assert headers["x-request-id"].startswith("req-")
        assert float(headers["x-llmplex-overhead-ms"]) >= 0


def test_item_5_gateway_stream_answers_keep_their_headers(gateway: Gateway) -> None:
    """Without the marker: every stream still carries its fixed headers once each, and its request's own."""
    for answer in _post_all(gateway)[1:]:
        names = [name.lower() for name, _ in answer.headers.raw]
        for name in (b"content-type", b"cache-control", b"x-accel-buffering", b"x-request-id"):
            assert names.count(name) == 1, (name, answer.headers.raw)
        assert answer.headers["x-llmplex-overhead-ms"]
