"""Issue 34 item 5: a whole answer or a stream learns of a client that left from its connection, without a task.

``Pipeline.complete`` started a task per request that waited on ``receive`` for ``http.disconnect`` (a task
created, stepped and cancelled for every request: ``ensure_future`` alone was 0.7 % of the gateway's py-spy
samples at 64 in flight). ``llmplex serve``'s protocol (``GuardedHttpToolsProtocol``) now gives every request
``scope["extensions"][CONNECTION_LOST]["future"]``, done once the connection is lost, and the call is cancelled
from its callback; a stream's sender listens to the same future (it too had a task on ``receive``). Where a server
gives none, the task remains. What must not change: the client's
leaving cancels the call and the request ends as a ``ConnectionError``, the server's own cancellation stays one.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import uvicorn

from llmplex.config.schema import GatewayConfig
from llmplex.gateway.guard.head import CONNECTION_LOST, GuardedHttpToolsProtocol
from llmplex.gateway.pipeline import Exchange, Pipeline
from llmplex.gateway.streaming import stream_response
from tests.gateway.harness import MASTER_KEY, Gateway, gateway_config
from tests.speed.test_item_5_gateway_whole_answer import ANSWER, Upstream, others
from tests.tenancy.guard_support import guarded_gateway


def complete(upstream: Upstream, lost: asyncio.Future[None]) -> Any:
    fake: Any = upstream
    pipeline = Pipeline(fake, GatewayConfig(), None)  # type: ignore[arg-type]
    exchange = Exchange("req_test", "chat.completions", "openai", time.perf_counter(), time.time())
    spec: Any = SimpleNamespace(model="m", messages=[], kwargs={}, stream=False)

    async def receive() -> dict[str, Any]:
        raise AssertionError("receive is not called: the connection's future says when the client left")

    request: Any = SimpleNamespace(receive=receive, scope={"extensions": {CONNECTION_LOST: {"future": lost}}})
    return pipeline.complete(exchange, request, spec, SimpleNamespace(call_args={}))  # type: ignore[arg-type]


def test_item_5_a_whole_answer_with_the_connections_future_starts_no_watcher_task() -> None:
    async def run() -> None:
        lost = asyncio.get_running_loop().create_future()
        upstream = Upstream("wait")
        calling = asyncio.ensure_future(complete(upstream, lost))
        await upstream.began.wait()
        assert others() == {calling}  # the request's own task only
        lost.set_result(None)  # the client's connection is lost
        with pytest.raises(ConnectionError):
            await calling
        assert upstream.cancelled and upstream.task is not None and upstream.task.cancelling() == 0

        answered = asyncio.get_running_loop().create_future()
        assert await complete(Upstream(), answered) is ANSWER
        assert not answered._callbacks  # type: ignore[attr-defined]  # nothing left on the connection's future

    asyncio.run(run())


def test_item_5_the_servers_cancellation_stays_one_with_the_connections_future() -> None:
    async def run() -> None:
        lost = asyncio.get_running_loop().create_future()
        upstream = Upstream("wait")
        calling = asyncio.ensure_future(complete(upstream, lost))
        await upstream.began.wait()
        calling.cancel()
        with pytest.raises(asyncio.CancelledError):
            await calling
        assert upstream.cancelled and not lost._callbacks  # type: ignore[attr-defined]

    asyncio.run(run())


def test_item_5_a_stream_with_the_connections_future_starts_no_disconnect_task() -> None:
    async def run() -> None:
        lost = asyncio.get_running_loop().create_future()
        sent: list[dict[str, Any]] = []
        started = asyncio.Event()

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        async def receive() -> dict[str, Any]:
            raise AssertionError("receive is not called: the connection's future says when the client left")

        async def chunks() -> AsyncIterator[bytes]:
            yield b"data: 1\n\n"
            started.set()
            await asyncio.sleep(3600)  # silence until the client leaves
            yield b"data: 2\n\n"

        async def error_response(error: Any) -> None:
            raise AssertionError(error)

        encoder: Any = SimpleNamespace(fail=lambda error: b"")
        streaming = stream_response(send, receive, chunks(), encoder, [], error_response, 3600.0, lost)
        task = asyncio.ensure_future(streaming)
        await started.wait()
        assert len(others()) == 2  # the stream's task and its producer: nothing waits on receive
        lost.set_result(None)
        outcome = await task
        assert outcome.disconnected and sent[1]["body"] == b"data: 1\n\n"
        assert not lost._callbacks  # type: ignore[attr-defined]  # nothing left on the connection's future

    asyncio.run(run())


class Seen:
    """An ASGI app keeping each request's ``CONNECTION_LOST`` extension and telling when its future is done."""

    def __init__(self) -> None:
        self.extensions: list[dict[str, Any]] = []
        self.lost = threading.Event()
        self.arrived = threading.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        extension = scope["extensions"][CONNECTION_LOST]
        self.extensions.append(extension)
        self.arrived.set()
        if scope["path"] == "/wait":
            await extension["future"]
            self.lost.set()
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[Seen, int]]:
    app = Seen()
    config = uvicorn.Config(app, host="127.0.0.1", port=0, loop="asyncio", http=GuardedHttpToolsProtocol)
    config.log_level = "warning"
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60  # bounded, not a margin
    while not running.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.01)
    try:
        yield app, int(running.servers[0].sockets[0].getsockname()[1])
    finally:
        running.should_exit = True
        thread.join(10)


def test_item_5_the_guarded_protocol_tells_each_request_when_its_connection_is_lost(server: tuple[Seen, int]) -> None:
    app, port = server
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        for _ in range(2):  # two requests on one connection: the same future
            sock.sendall(b"GET /quick HTTP/1.1\r\nhost: x\r\n\r\n")
            answer = b""
            while not answer.endswith(b"\r\n\r\nok"):
                read = sock.recv(4096)
                assert read, answer
                answer += read
        assert app.extensions[0]["future"] is app.extensions[1]["future"]
        assert not app.extensions[0]["future"].done()  # answered, still connected
        sock.sendall(b"GET /wait HTTP/1.1\r\nhost: x\r\n\r\n")
        assert app.arrived.wait(10)
    assert app.lost.wait(10)  # the client closed: the request waiting on its future learns of it


@pytest.fixture(scope="module")
def guarded() -> Iterator[Gateway]:
    """The gateway over ``llmplex serve``'s protocol (its CONNECTION_LOST future on every request)."""
    with guarded_gateway(gateway_config(timeout=60)) as running:
        yield running


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_item_5_a_client_leaving_llmplex_serves_protocol_cancels_the_upstream_call(
    guarded: Gateway, stream: bool
) -> None:
    guarded.mock.push("late", delay=60)  # the answer would come in a minute
    before, records = len(guarded.mock.calls), len(guarded.recorder.records)
    body = b'{"model": "mock:echo", "messages": [{"role": "user", "content": "hi"}], "stream": %s}' % (
        b"true" if stream else b"false"
    )
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"authorization: Bearer {MASTER_KEY}\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", guarded.port), timeout=10) as client:
        client.sendall(head.encode() + body)
        deadline = time.monotonic() + 30  # bounded, not a margin
        while len(guarded.mock.calls) == before:  # the upstream call began
            assert time.monotonic() < deadline
            time.sleep(0.01)
    # the client is gone: the call is cancelled and the request recorded, long before the answer's minute
    guarded.recorder.wait_count(records + 1, 30)
    (record,) = guarded.recorder.records[records:]
    assert record.error_type == "client_disconnected" and record.stream is stream and record.latency < 30
