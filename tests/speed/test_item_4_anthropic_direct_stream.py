"""Issue 34 item 4: an async lean stream of llmplex-anthropic is opened and read straight on the aiohttp session
under the SDK's aiohttp-backed client (``llmplex.http.direct_stream``), as llmplex-openai's are, skipping httpx2's
request, ``send``, response and stream wrappers, and keeps every promise of the httpx path.

Each behaviour runs both ways: ``direct`` (the default) and ``httpx`` (``DirectSender.usable`` forced false); a spy
on ``lean.open_stream`` says which way a stream went. Every stream goes over a real socket to a local server.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
from collections.abc import Callable
from typing import Any

import pytest
from llmplex_anthropic import lean

import llmplex
from llmplex import Deadline, LLMError
from tests.support.direct_streams import (
    DEADLINE_FAULTS,
    OVERRUN,
    both,
    connections,
    past_the_deadline,
    timings_hidden,
    way,
)
from tests.support.fault_server import FaultServer
from tests.support.lean_streams import STREAM_FAULTS
from tests.support.socket_server import SocketServer
from tests.support.stream_server import Reply, StreamServer

KEY = "sk-ant-direct-stream-0a1b2c3d4e5f6071"
PATH = "/v1/messages"


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _text(text: str) -> bytes:
    return _event(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
    )


START = _event(
    "message_start",
    {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 9, "output_tokens": 1},
        },
    },
) + _event(
    "content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
)
END = (
    _event("content_block_stop", {"type": "content_block_stop", "index": 0})
    + _event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 7},
        },
    )
    + _event("message_stop", {"type": "message_stop"})
)
BODY = START + b'event: ping\ndata: {"type": "ping"}\n\n' + _text("Hello") + _text(" there") + END


def _llm(root: str) -> llmplex.Client:
    provider = {"plugin": "anthropic", "base_url": root, "api_key": KEY}
    return llmplex.Client(providers={"p": provider}, throttle={"max_attempts": 1})


def _ending(llm: llmplex.Client, **kwargs: Any) -> tuple[object, ...]:
    """The texts a stream delivered, and how it ended: ``"ok"`` or its error's type, text, status, headers kept and
    the SDK error's response (its type, status and headers)."""
    texts: list[str] = []

    async def read() -> None:
        try:
            async for event in llm.astream("p:m", "hi", **kwargs):
                if event.type == "text":
                    texts.append(event.text or "")
        finally:
            await llm.aclose()

    try:
        asyncio.run(read())
    except LLMError as error:
        cause = error.__cause__
        response = getattr(cause, "response", None)
        seen = None if response is None else (type(response), response.status_code, _fixed(response.headers))
        context = error.context
        return tuple(texts), type(error), str(error), context.get("status_code"), _fixed(context.get("headers")), seen
    return tuple(texts), "ok"


def _fixed(headers: Any) -> dict[str, str] | None:
    """``headers`` with the values that change from one answer to the next (its date, a fault's request id) hidden."""
    if headers is None:
        return None
    return {
        name: "V" if name.lower() == "date" or name.lower() == "x-request-id" else value
        for name, value in headers.items()
    }


def test_item_4_anthropic_direct_stream_sends_the_same_request_and_yields_the_same_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with StreamServer() as server:
        server.script(Reply.events(BODY))
        direct, through_httpx = both(monkeypatch, lean, lambda: _ending(_llm(server.url)))
        first, second = server.requests
    assert direct == through_httpx == (("Hello", " there"), "ok")
    assert (first.path, first.body) == (second.path, second.body) and first.path == PATH
    assert json.loads(first.body)["stream"] is True
    assert first.headers == second.headers  # the streamed call announces no timeout of its own: the same values
    assert [name for name, _ in first.headers][:1] == ["host"] and first.headers[-1][0] == "content-length"


def test_item_4_anthropic_direct_stream_with_a_deadline_sends_the_same_request(monkeypatch: pytest.MonkeyPatch) -> None:
    with StreamServer() as server:
        server.script(Reply.events(BODY))
        direct, through_httpx = both(monkeypatch, lean, lambda: _ending(_llm(server.url), deadline=Deadline.after(30)))
        first, second = server.requests
    assert direct == through_httpx == (("Hello", " there"), "ok")
    assert timings_hidden(first.headers) == timings_hidden(second.headers) and first.body == second.body


ERROR_EVENT = b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}\n\n'
ANSWERS: dict[str, Callable[[], list[Reply]]] = {
    "a 429 with Retry-After": lambda: [
        Reply.json(429, b'{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}', {"Retry-After": "7"})
    ],
    "a 529 overloaded": lambda: [
        Reply.json(529, b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}')
    ],
    "a 404 in HTML": lambda: [Reply(404, (b"<html>no</html>",), "text/html")],
    "an error event": lambda: [
        Reply(
            200, (START + _text("Hi") + ERROR_EVENT,), "text/event-stream", (("Request-Id", "req_1"), ("X-Seen", "a"))
        )
    ],
    "an error event that is not JSON": lambda: [Reply.events(START + _text("Hi") + b"event: error\ndata: {nope\n\n")],
    "malformed JSON": lambda: [Reply.events(START + _text("Hi") + b"event: content_block_delta\ndata: {not json\n\n")],
    "a gzip-encoded stream": lambda: [
        Reply(200, (gzip.compress(BODY),), "text/event-stream", (("Content-Encoding", "gzip"),))
    ],
    "a cookie set": lambda: [Reply(200, (BODY,), "text/event-stream", (("Set-Cookie", "seen=1; Path=/"),))],
    "a 307 redirect": lambda: [Reply(307, (b"",), "text/plain", (("Location", PATH),)), Reply.events(BODY)],
    "cut mid-stream": lambda: [
        Reply.events(START + _text("Hi") + b"event: content_block_delta\ndata: {", ending="cut")
    ],
}


@pytest.mark.parametrize("answer", list(ANSWERS))
def test_item_4_anthropic_direct_stream_errors_are_the_sdks_exceptions_as_through_httpx(
    answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error status, an error event (its SDK error carrying httpx's ``Response``, the same headers), a body that
    is not JSON, a cut, an encoded body, a cookie, a redirect: the caller sees what it saw through httpx."""
    with StreamServer() as server:

        def run() -> tuple[object, ...]:
            server.script(*ANSWERS[answer]())
            return _ending(_llm(server.url))

        direct, through_httpx = both(monkeypatch, lean, run)
    assert direct == through_httpx
    assert direct[1] is not LLMError and KEY not in repr(direct)


def test_item_4_anthropic_direct_stream_error_event_carries_httpx_response(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK error of an error event read directly carries the httpx ``Response`` of the stream (status, headers as
    httpx reads them, the request it answered), as through httpx: fails on a path that hands the SDK aiohttp's."""
    with StreamServer() as server, way(monkeypatch, lean, "direct") as opened:
        server.script(*ANSWERS["an error event"]())
        outcome = _ending(_llm(server.url))
    assert opened
    kind, status, headers = outcome[-1]  # type: ignore[misc]
    assert headers is not None
    assert kind.__name__ == "Response" and kind.__module__.startswith("httpx")
    assert status == 200 and headers["request-id"] == "req_1" and headers["x-seen"] == "a"


@pytest.mark.parametrize("fault", list(STREAM_FAULTS))
def test_item_4_anthropic_direct_stream_faults_end_alike_both_ways(fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with FaultServer(any_path=True) as server:

        def run() -> tuple[object, ...]:
            server.enqueue(STREAM_FAULTS[fault]())
            return _ending(_llm(server.url.removesuffix("/v1")))

        direct, through_httpx = both(monkeypatch, lean, run)
    assert direct == through_httpx


@pytest.mark.parametrize("fault", list(DEADLINE_FAULTS))
def test_item_4_anthropic_direct_stream_ends_at_the_deadline(fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with FaultServer(DEADLINE_FAULTS[fault](), any_path=True) as server:
        went_directly, seconds, late = past_the_deadline(monkeypatch, lean, _llm(server.url.removesuffix("/v1")))
    assert went_directly and seconds < OVERRUN, late.describe(seconds)


def test_item_4_anthropic_direct_stream_cancelled_mid_read_closes_the_upstream(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream cancelled while it waits for the upstream's next bytes: its connection is closed (none acquired,
    none pooled), the server sees it closed, no task is left behind."""
    closed = threading.Event()

    def answer(connection: socket.socket, stopping: threading.Event) -> None:
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n" + START + _text("Hi"))
        connection.settimeout(30)
        if connection.recv(1) == b"":  # the client closed the connection
            closed.set()

    async def cancel(llm: llmplex.Client) -> tuple[int, int, set[asyncio.Task[Any]]]:
        first = asyncio.Event()

        async def read() -> None:
            async for event in llm.astream("p:m", "hi"):
                if event.type == "text":
                    first.set()

        task = asyncio.create_task(read())
        await first.wait()
        await asyncio.sleep(0.05)  # the reader waits for more bytes
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        acquired, pooled = connections(llm)
        left = {t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()}
        await llm.aclose()
        return acquired, pooled, left

    with SocketServer(answer) as server, way(monkeypatch, lean, "direct") as opened:
        outcome = asyncio.run(cancel(_llm(server.root)))
        assert closed.wait(10)
    assert opened and outcome == (0, 0, set())


def test_item_4_anthropic_direct_stream_stopped_early_closes_its_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """A consumer that stops reading after the first text closes the connection of an unfinished body instead of
    pooling it."""
    closed = threading.Event()

    def answer(connection: socket.socket, stopping: threading.Event) -> None:
        connection.recv(65536)
        body = START + _text("Hello") * 200
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        connection.sendall(head + b"%x\r\n%s\r\n" % (len(body), body))
        connection.settimeout(30)
        if connection.recv(1) == b"":
            closed.set()

    async def early(llm: llmplex.Client) -> tuple[int, int]:
        stream = llm.astream("p:m", "hi")
        async for event in stream:
            if event.type == "text":
                break
        await stream.aclose()
        assert await asyncio.to_thread(closed.wait, 10)  # the server saw the connection closed
        seen = connections(llm)
        await llm.aclose()
        return seen

    with SocketServer(answer) as server, way(monkeypatch, lean, "direct") as opened:
        assert asyncio.run(early(_llm(server.root))) == (0, 0)
    assert opened


def test_item_4_anthropic_direct_stream_hands_on_the_first_chunk_before_the_second_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen_first = threading.Event()
    waited: list[bool] = []

    def answer(connection: socket.socket, stopping: threading.Event) -> None:
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
        connection.sendall(START + _text("first"))
        waited.append(seen_first.wait(30))
        connection.sendall(_text("second") + END)

    async def read(llm: llmplex.Client) -> list[str]:
        texts = []
        async for event in llm.astream("p:m", "hi"):
            if event.type == "text":
                texts.append(event.text or "")
                seen_first.set()
        await llm.aclose()
        return texts

    with SocketServer(answer) as server, way(monkeypatch, lean, "direct") as opened:
        assert asyncio.run(read(_llm(server.root))) == ["first", "second"]
    assert opened and waited == [True]


def test_item_4_anthropic_many_direct_streams_in_flight_all_end(monkeypatch: pytest.MonkeyPatch) -> None:
    async def many(llm: llmplex.Client) -> list[str]:
        async def one() -> str:
            return "".join([e.text or "" async for e in llm.astream("p:m", "hi") if e.type == "text"])

        texts = await asyncio.gather(*(one() for _ in range(64)))
        await llm.aclose()
        return texts

    with StreamServer() as server, way(monkeypatch, lean, "direct") as opened:
        server.script(*[Reply.events(BODY)] * 64)
        assert asyncio.run(many(_llm(server.url))) == ["Hello there"] * 64
    assert len(opened) == 64
