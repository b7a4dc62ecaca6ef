"""Issue 14 item 1: the kit's HTTP side, a real local server: it records what plugins send and answers as scripted."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from llmplex.testing import Answer, WireServer, sse


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


def test_item_1_answers_in_order_and_records_each_request(server: WireServer) -> None:
    server.push(Answer.json(200, {"n": 1}), Answer.text(502, "<html>bad gateway</html>", "text/html"))
    with httpx.Client(base_url=server.url) as client:
        first = client.post("/v1/chat?alt=sse", json={"hello": "kit"}, headers={"x-kit": "1"})
        second = client.get("/v1/other")
    assert (first.status_code, first.json()) == (200, {"n": 1})
    assert (second.status_code, second.headers["content-type"], second.text) == (
        502,
        "text/html",
        "<html>bad gateway</html>",
    )
    sent = server.received
    assert [(r.method, r.path, dict(r.query)) for r in sent] == [
        ("POST", "/v1/chat", {"alt": ["sse"]}),
        ("GET", "/v1/other", {}),
    ]
    assert sent[0].json() == {"hello": "kit"}
    assert sent[0].headers["x-kit"] == "1"
    assert server.pending == 0


def test_item_1_a_request_nothing_was_queued_for_is_a_599_naming_it(server: WireServer) -> None:
    answer = httpx.post(f"{server.url}/v1/surprise", json={})
    assert answer.status_code == 599
    assert "POST /v1/surprise" in answer.json()["error"]["message"]


def test_item_1_a_stream_arrives_chunk_by_chunk(server: WireServer) -> None:
    server.push(Answer.stream([sse({"n": 1}), sse("[DONE]", event="end")]))
    with httpx.Client() as client, client.stream("POST", f"{server.url}/s") as answer:
        lines = list(answer.iter_lines())
    assert answer.headers["transfer-encoding"] == "chunked"
    assert lines == ['data: {"n": 1}', "", "event: end", "data: [DONE]", ""]


def test_item_1_a_stall_holds_the_client_until_its_timeout_and_ends_when_the_server_stops() -> None:
    server = WireServer().start()
    server.push(Answer.stall(60))
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.url}/slow", json={}, timeout=0.3)
    server.stop()
    assert time.monotonic() - started < 5


def test_item_1_a_reset_is_a_connection_failure(server: WireServer) -> None:
    server.push(Answer.reset())
    with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectError)):
        httpx.post(f"{server.url}/reset", json={})
