"""Issue 34 item 5: a stream through the gateway opens its upstream straight on aiohttp (``llmplex.http.direct_stream``)
and still forwards each chunk as it comes, closes the upstream when its client leaves, and records its row.

A real gateway (``tests.gateway.harness``) in front of a bare socket upstream that waits on what the test's client
saw: event-ordered, no timing.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

import httpx
import pytest
from llmplex_openai import lean

from tests.gateway.harness import MASTER_KEY, PROVIDER_KEY, running_gateway
from tests.support.socket_server import SocketServer

AUTH = {"authorization": f"Bearer {MASTER_KEY}"}
CHAT = {"model": "up:m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"


def _chunk(text: str | None, finish: str | None = None) -> bytes:
    delta = {} if text is None else {"content": text}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    event = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return b"data: " + json.dumps(event).encode() + b"\n\n"


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """One entry per upstream stream opened directly."""
    found: list[object] = []
    open_stream = lean.open_stream

    async def spy(*args: Any, **kwargs: Any) -> Any:
        found.append(args[1])
        return await open_stream(*args, **kwargs)

    monkeypatch.setattr(lean, "open_stream", spy)
    return found


def _config(root: str) -> dict[str, Any]:
    provider = {"plugin": "openai", "base_url": f"{root}/v1", "api": "chat", "api_key": PROVIDER_KEY}
    return {"providers": {"up": provider}, "throttle": {"max_attempts": 1}, "gateway": {"keepalive_seconds": 30}}


def _texts(lines: list[str]) -> list[str]:
    found = []
    for line in lines:
        if line.startswith("data: {"):
            found += [c["delta"].get("content") or "" for c in json.loads(line[6:])["choices"]]
    return [text for text in found if text]


def test_item_5_the_gateway_forwards_the_first_chunk_before_the_upstream_sends_its_second(
    opened: list[object],
) -> None:
    seen_first = threading.Event()
    waited: list[bool] = []

    def answer(connection: socket.socket, stopping: threading.Event) -> None:
        connection.recv(65536)
        connection.sendall(HEAD + _chunk(None) + _chunk("first"))
        waited.append(seen_first.wait(30))  # bounded: a gateway holding the chunk back makes this False
        connection.sendall(_chunk("second") + _chunk(None, "stop") + b"data: [DONE]\n\n")

    lines: list[str] = []
    with SocketServer(answer) as upstream, running_gateway(_config(upstream.root)) as gateway:
        with (
            httpx.Client(base_url=gateway.url, headers=AUTH, timeout=60) as http,
            http.stream("POST", "/v1/chat/completions", json=CHAT) as reply,
        ):
            assert reply.status_code == 200
            for line in reply.iter_lines():
                lines.append(line)
                if _texts(lines) == ["first"]:
                    seen_first.set()
        record = gateway.recorder.wait_for(lambda r: r.stream)
    assert opened and waited == [True]
    assert _texts(lines) == ["first", "second"] and [line for line in lines if line][-1] == "data: [DONE]"
    assert (record.status, record.error_type) == (200, None)


def test_item_5_a_client_leaving_mid_stream_closes_the_direct_upstream_and_its_row_is_written(
    opened: list[object],
) -> None:
    closed = threading.Event()

    def answer(connection: socket.socket, stopping: threading.Event) -> None:
        connection.recv(65536)
        connection.sendall(HEAD + _chunk(None) + _chunk("first"))
        connection.settimeout(30)
        if connection.recv(1) == b"":  # the gateway closed the upstream connection
            closed.set()

    with SocketServer(answer) as upstream, running_gateway(_config(upstream.root)) as gateway:
        with (
            httpx.Client(base_url=gateway.url, headers=AUTH, timeout=60) as http,
            http.stream("POST", "/v1/chat/completions", json=CHAT) as reply,
        ):
            lines = []
            for line in reply.iter_lines():
                lines.append(line)
                if _texts(lines):
                    break  # the client leaves: the connection is closed with the stream
        assert closed.wait(30)
        record = gateway.recorder.wait_for(lambda r: r.stream)
    assert opened and record.error_type == "client_disconnected" and record.usage_estimated  # charged what it used
