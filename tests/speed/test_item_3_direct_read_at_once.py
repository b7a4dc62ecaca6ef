"""Issue 34 item 3: a direct post held to a deadline reads a body that has all arrived already (a short answer
comes with its headers) at once, without a timer of its own; a body still arriving is read under the deadline as
before, ``ReadTimeout`` when it is still arriving at the deadline."""

from __future__ import annotations

import asyncio
import socketserver
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

import llmplex
from llmplex import Deadline
from llmplex.http import direct_sender
from llmplex.reliability.deadline import deadline_scope
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer
from tests.support.openai_wire import CHAT_PATH, success_body

_ANSWER = success_body(CHAT_PATH, {"model": "m"}, "Hello!", fx.TokenUsage())
_TIMEOUTS = {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0}


class _WholeAnswer(socketserver.BaseRequestHandler):
    """Reads a request (head and its Content-Length of body), then writes the whole answer, head and body, in one
    send: the body has arrived with the head, whatever the host's load (two writes, as http.server makes, let a
    client read the head before the body on a busy host)."""

    def handle(self) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += self.request.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        while len(body) < length:
            body += self.request.recv(65536)
        answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
        self.request.sendall(answer % (len(_ANSWER), _ANSWER))


@contextmanager
def _whole_answer_server() -> Iterator[str]:
    """The URL of a server answering every request with ``_ANSWER`` in one send."""
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), _WholeAnswer) as server:
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()


def _timers_of_direct(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """The delays of the ``asyncio.timeout`` scopes ``llmplex.http.direct`` itself opens."""
    timeout, opened = asyncio.timeout, []

    def counted(delay: float | None) -> Any:
        if sys._getframe(1).f_globals.get("__name__") == "llmplex.http.direct":
            opened.append(delay)
        return timeout(delay)

    monkeypatch.setattr(asyncio, "timeout", counted)
    return opened


async def _post(url: str, deadline: Deadline) -> Any:
    llm = llmplex.Client(providers={"p": {"plugin": "openai", "base_url": url, "api_key": "k"}})
    try:
        http = llm.router.instance("p").clients.get(asynchronous=True)._client
        sender = direct_sender(http)
        assert sender is not None
        with deadline_scope(deadline):
            return await sender.post(
                url + CHAT_PATH, ((b"x-fixed", b"1"),), b"{}", _TIMEOUTS, lambda: httpx.Request("POST", url)
            )
    finally:
        await llm.aclose()


def test_item_3_a_body_arrived_whole_is_read_without_a_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = _timers_of_direct(monkeypatch)
    with _whole_answer_server() as url:
        answer = asyncio.run(_post(url, Deadline.after(30)))
    monkeypatch.undo()
    assert answer.status == 200
    assert answer.content == _ANSWER
    assert opened == []


def test_item_3_a_body_still_arriving_is_read_under_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = _timers_of_direct(monkeypatch)
    with FaultServer(default=Fault.trickle(0.3), any_path=True) as server, pytest.raises(httpx.ReadTimeout):
        asyncio.run(_post(server.url, Deadline.after(0.6)))
    monkeypatch.undo()
    assert len(opened) == 1
