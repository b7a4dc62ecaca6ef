"""Issue 34 item 5: ``llmplex serve`` writes an answer of known length in one ``transport.write`` (one syscall).

uvicorn's httptools cycle writes the head (status line and headers) when the application sends
``http.response.start`` and the body when it sends ``http.response.body``: two writes, two ``send`` syscalls
and, on loopback, often two segments for every whole answer (9.1 % of the gateway's CPU went to writing the
answer). ``GuardedHttpToolsProtocol`` holds the head of an answer with a ``content-length`` and writes it with
the body, a stream's head with its first chunk when the application sends both in one step of the loop (the
gateway's streams do). What must not change: the bytes on the wire, a stream's head not held for a late chunk,
``HEAD`` answers, ``100 Continue``, pipelined requests, and a head whose body never comes (still written).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import uvicorn
from uvicorn.server import ServerState

from llmplex.gateway.guard.head import GuardedHttpToolsProtocol
from tests.speed.recording_transport import RecordingTransport


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/expect":
        await receive()
    if path in ("/stream", "/late"):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        if path == "/late":  # the first chunk comes later: the head goes out on its own first
            await asyncio.sleep(0)
            assert len(Seen.transport.writes) == 1
        await send({"type": "http.response.body", "body": b"one", "more_body": True})
        await send({"type": "http.response.body", "body": b"two"})
        return
    body = b"" if path == "/empty" else b'{"ok":true}'
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    if path == "/broken":
        raise RuntimeError("the application failed after its head")
    await send({"type": "http.response.body", "body": body})


class Seen:
    transport: RecordingTransport


def _served(requests: bytes) -> RecordingTransport:
    """``requests`` fed to ``llmplex serve``'s protocol at once; what it wrote once every answer was sent."""

    async def run() -> RecordingTransport:
        config = uvicorn.Config(_app, http=GuardedHttpToolsProtocol, log_level="critical", lifespan="off")
        config.load()
        protocol = GuardedHttpToolsProtocol(config, ServerState(), {})
        Seen.transport = transport = RecordingTransport()
        protocol.connection_made(transport)
        protocol.data_received(requests)
        while protocol.tasks:  # a pipelined request's task starts as the one before it completes
            await asyncio.gather(*protocol.tasks)
        protocol.connection_lost(None)
        return transport

    return asyncio.run(run())


def _request(method: str, path: str, extra: str = "", body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nhost: x\r\ncontent-length: {len(body)}\r\n{extra}\r\n"
    return head.encode() + body


@pytest.mark.parametrize("path", ["/whole", "/empty"])
def test_item_5_gateway_a_whole_answer_is_one_write(path: str) -> None:
    (written,) = _served(_request("POST", path)).writes
    head, _, body = written.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"content-length: " in head
    assert body == (b"" if path == "/empty" else b'{"ok":true}')


def test_item_5_gateway_pipelined_answers_are_one_write_each() -> None:
    writes = _served(_request("POST", "/whole") + _request("GET", "/empty")).writes
    assert [w.partition(b"\r\n\r\n")[2] for w in writes] == [b'{"ok":true}', b""]


def test_item_5_gateway_a_streams_head_is_written_with_its_first_chunk() -> None:
    first, *rest = _served(_request("GET", "/stream")).writes
    head, _, chunk = first.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"transfer-encoding: chunked" in head
    assert chunk == b"3\r\none\r\n" and rest == [b"3\r\ntwo\r\n0\r\n\r\n"]


def test_item_5_gateway_a_streams_head_waits_for_no_late_first_chunk() -> None:
    head, *chunks = _served(_request("GET", "/late")).writes
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and head.endswith(b"\r\n\r\n")
    assert chunks == [b"3\r\none\r\n", b"3\r\ntwo\r\n0\r\n\r\n"]


def test_item_5_gateway_a_head_answer_and_100_continue_are_written() -> None:
    (head,) = _served(_request("HEAD", "/whole")).writes
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and head.endswith(b"\r\n\r\n")
    writes = _served(_request("POST", "/expect", "expect: 100-continue\r\n", b"hi")).writes
    assert writes[0] == b"HTTP/1.1 100 Continue\r\n\r\n" and writes[1].endswith(b'\r\n\r\n{"ok":true}')


def test_item_5_gateway_a_head_whose_body_never_comes_is_still_written() -> None:
    transport = _served(_request("POST", "/broken"))
    assert transport.closed and transport.writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
