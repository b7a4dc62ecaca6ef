"""Issue 34 item 3: the lean async calls of the openai and anthropic plugins post straight on the aiohttp session
under the SDK's aiohttp-backed httpx client (``llmplex.http.direct_sender``), skipping httpx's request and
response objects, and keep every promise of the httpx path.

Each behaviour runs both ways: ``direct`` (the default) and ``httpx`` (``DirectSender.usable`` forced false, so
the call goes through ``httpx2.AsyncClient.send`` as before); a spy on ``DirectSender.post`` says which way a call
went. Every call goes over a real socket to a local server.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import logging
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import aiohttp
import pytest

import llmplex
from llmplex import Deadline, LLMDeadlineExceededError, LLMError
from llmplex.http import http_library
from llmplex.http.direct import DirectSender
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer
from tests.support.late import Late
from tests.support.openai_wire import CHAT_PATH, RESPONSES_PATH, success_body
from tests.support.socket_server import SocketServer
from tests.support.stream_server import Reply, StreamServer

KEY = "sk-direct-test-0a1b2c3d4e5f60718293"
T, OVERRUN = 0.6, 0.05
"""The deadline of the deadline tests, and the slack past it on a loaded 2-core machine."""

MESSAGE = {
    "id": "msg_direct",
    "type": "message",
    "role": "assistant",
    "model": "m",
    "content": [{"type": "text", "text": "Hello! How can I help?"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 9, "output_tokens": 7},
}
INSTANCES: dict[str, tuple[Callable[[str], dict[str, Any]], str, bytes]] = {
    "openai chat": (
        lambda root: {"plugin": "openai", "base_url": f"{root}/v1", "api": "chat", "api_key": KEY},
        CHAT_PATH,
        success_body(CHAT_PATH, {"model": "m"}, "Hello! How can I help?", fx.TokenUsage()),
    ),
    "openai responses": (
        lambda root: {"plugin": "openai", "base_url": f"{root}/v1", "api": "responses", "api_key": KEY},
        RESPONSES_PATH,
        success_body(RESPONSES_PATH, {"model": "m"}, "Hello! How can I help?", fx.TokenUsage()),
    ),
    "azure chat": (
        lambda root: {"plugin": "azure", "endpoint": root, "api_key": KEY},
        "/openai/deployments/m/chat/completions?api-version=2024-10-21",
        success_body(CHAT_PATH, {"model": "m"}, "Hello! How can I help?", fx.TokenUsage()),
    ),
    "anthropic": (
        lambda root: {"plugin": "anthropic", "base_url": root, "api_key": KEY},
        "/v1/messages",
        json.dumps(MESSAGE).encode(),
    ),
}
WAYS = ("direct", "httpx")


def _llm(instance: str, root: str) -> llmplex.Client:
    return llmplex.Client(providers={"p": INSTANCES[instance][0](root)}, throttle={"max_attempts": 1})


def _sdk_client(llm: llmplex.Client) -> Any:
    (route,) = llm.router.instances()
    return route.clients.get(asynchronous=True)


@contextlib.contextmanager
def _way(monkeypatch: pytest.MonkeyPatch, way: str) -> Iterator[list[object]]:
    """Send ``way``; the list fills with one entry per direct post."""
    posts: list[object] = []
    post = DirectSender.post

    async def spy(self: DirectSender, *args: Any, **kwargs: Any) -> Any:
        posts.append(args[0])
        return await post(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(DirectSender, "post", spy)
        if way == "httpx":
            patch.setattr(DirectSender, "usable", lambda self: False)
        yield posts


def _seen(error: LLMError) -> tuple[object, ...]:
    """An error as a caller reads it: its type, text and context (the failed attempts' errors by type and text)."""
    context = dict(error.context)
    context["errors"] = [(f.model, f.attempt, type(f.error), str(f.error)) for f in context.get("errors", ())]
    return type(error), str(error), context


def _outcome(call: Callable[[], Awaitable[llmplex.Response]]) -> tuple[object, ...]:
    """What a caller sees: the response (less its latency) and its raw answer, or the error's type, text and
    context."""
    try:
        response = asyncio.run(call())  # type: ignore[arg-type]
    except LLMError as error:
        return _seen(error)
    return response.model_dump(exclude={"latency"}), response.raw


def _both(monkeypatch: pytest.MonkeyPatch, run: Callable[[], tuple[object, ...]]) -> list[tuple[object, ...]]:
    """``run()`` both ways: its outcomes; asserts the direct way posted directly and the other did not."""
    outcomes = []
    for way in WAYS:
        with _way(monkeypatch, way) as posts:
            outcomes.append(run())
        assert bool(posts) is (way == "direct"), way
    return outcomes


# -- the same request, the same answers ---------------------------------------------------------------------------


def _timings_hidden(headers: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple((name, "T" if "timeout" in name else value) for name, value in headers)


@pytest.mark.parametrize("instance", list(INSTANCES))
def test_item_3_direct_post_sends_the_same_request_and_reads_the_same_response(
    instance: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, path, body = INSTANCES[instance]
    with StreamServer() as server:
        server.script(Reply.json(200, body))
        llm = _llm(instance, server.url)
        direct, through_httpx = _both(monkeypatch, lambda: _outcome(lambda: llm.acomplete("p:m", "hi")))
        assert direct == through_httpx and direct[1]
        first, second = server.requests
    assert (
        (first.method, first.path, first.body)
        == (second.method, second.path, second.body)
        == (
            "POST",
            path,
            first.body,
        )
    )
    assert _timings_hidden(first.headers) == _timings_hidden(second.headers)
    assert [name for name, _ in first.headers][:1] == ["host"] and first.headers[-1][0] == "content-length"


def _gzipped(body: bytes) -> Reply:
    return Reply(200, (gzip.compress(body),), "application/json", (("Content-Encoding", "gzip"),))


ANSWERS: dict[str, Callable[[str, bytes], list[Reply]]] = {
    "gzip-encoded JSON": lambda path, body: [_gzipped(body)],
    "a cookie set": lambda path, body: [Reply(200, (body,), "application/json", (("Set-Cookie", "seen=1; Path=/"),))],
    "a 307 redirect": lambda path, body: [
        Reply(307, (b"",), "text/plain", (("Location", path),)),
        Reply.json(200, body),
    ],
    "a 301 redirect": lambda path, body: [
        Reply(301, (b"",), "text/plain", (("Location", path),)),
        Reply.json(200, body),
    ],
    "JSON as text/plain": lambda path, body: [Reply(200, (body,), "text/plain; charset=utf-8")],
    "an HTML 200": lambda path, body: [Reply(200, (b"<html>hi</html>",), "text/html")],
    "a 204": lambda path, body: [Reply(204, (), "application/json")],
    "a 429 with Retry-After": lambda path, body: [
        Reply.json(429, b'{"error":{"message":"slow"}}', {"Retry-After": "7"})
    ],
    "a 404 in HTML": lambda path, body: [Reply(404, (b"<html>no</html>",), "text/html")],
    "a 500 in JSON": lambda path, body: [Reply.json(500, b'{"error":{"message":"boom","type":"server_error"}}')],
}


@pytest.mark.parametrize("instance", list(INSTANCES))
@pytest.mark.parametrize("answer", list(ANSWERS))
def test_item_3_answers_beyond_plain_json_end_alike_both_ways(
    instance: str, answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An encoded body, a cookie, a redirect, an error status, a body that is not JSON: the direct path hands them
    to httpx's reading (``Response``, cookie jar, redirect rules) and the caller sees what it saw before."""
    _, path, body = INSTANCES[instance]
    with StreamServer() as server:

        def run() -> tuple[object, ...]:
            server.script(*ANSWERS[answer](path, body))
            llm = _llm(instance, server.url)

            async def twice() -> tuple[object, ...]:
                first = await llm.acomplete("p:m", "hi")
                second = await llm.acomplete("p:m", "hi")  # a cookie set by the first is sent with this one
                cookies = dict(_sdk_client(llm)._client.cookies)
                await llm.aclose()
                return first, second, cookies

            try:
                first, second, cookies = asyncio.run(twice())
            except LLMError as error:
                return _seen(error)
            return first.model_dump(exclude={"latency"}), second.model_dump(exclude={"latency"}), cookies

        direct, through_httpx = _both(monkeypatch, run)
        sent = [(request.path, _timings_hidden(request.headers), request.body) for request in server.requests]
    assert direct == through_httpx
    half = len(sent) // 2
    assert sent[:half] == sent[half:]


FAULTS = {
    "rate limited": Fault.rate_limit(retry_after=3),
    "context too long": Fault.json(400, fx.context_length_exceeded_error()),
    "server error": Fault.server_error(503),
    "reset": Fault.reset(),
    "closed without an answer": Fault.hang(0),
    "malformed JSON": Fault.malformed_json(),
    "truncated": Fault.truncated(),
    "an unexpected shape": Fault.unexpected_shape(),
}


@pytest.mark.parametrize("instance", list(INSTANCES))
@pytest.mark.parametrize("fault", list(FAULTS))
def test_item_3_each_fault_ends_alike_both_ways(instance: str, fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same llmplex error type, message and context (retry-after, status) for each fault of the fault server."""
    with FaultServer(FAULTS[fault], any_path=True) as server:
        root = server.url.removesuffix("/v1")
        direct, through_httpx = _both(
            monkeypatch, lambda: _outcome(lambda: _llm(instance, root).acomplete("p:m", "hi"))
        )
    assert direct == through_httpx
    assert KEY not in repr(direct)


# -- deadlines, cancellation, many in flight ----------------------------------------------------------------------


def _huge_body(connection: socket.socket, stopping: threading.Event) -> None:
    """A 200 announcing a 16 GiB body, then sent in 16 KiB pieces 5 ms apart until the server stops."""
    connection.recv(65536)
    connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % 2**34)
    while not stopping.wait(0.005):
        connection.sendall(b'{"a":"' + b"x" * 16378)


DEADLINE_FAULTS = ["trickled body", "trickled headers", "stall mid-body", "silence", "huge body"]


def direct_post_ends_at_the_deadline(
    fault: str, monkeypatch: pytest.MonkeyPatch, make_client: Callable[[str], llmplex.Client], model: str
) -> None:
    """``model`` on the client ``make_client(root)`` builds, against a server with ``fault``: the direct POST
    ends with ``LLMDeadlineExceededError`` within ``OVERRUN`` of the deadline."""
    faults = {
        "trickled body": Fault.trickle(0.1),
        "trickled headers": Fault.trickle_headers(0.1),
        "stall mid-body": Fault.stream_stall(after_events=0, seconds=30),
        "silence": Fault.hang(30),
    }
    with contextlib.ExitStack() as stack:
        if fault == "huge body":
            root = stack.enter_context(SocketServer(_huge_body)).root
        else:
            root = stack.enter_context(FaultServer(faults[fault], any_path=True)).url.removesuffix("/v1")
        llm = make_client(root)
        # the plugin and its SDK imported before the deadline starts (a first use took more than T on a loaded host)
        llm.route(model).provider.client(False)
        deadline = Deadline.after(T)
        late = Late(deadline)

        async def call() -> object:
            late.on_loop()
            return await llm.acomplete(model, "hi", deadline=deadline)

        with _way(monkeypatch, "direct") as posts, pytest.raises(LLMDeadlineExceededError):
            asyncio.run(call())
        seconds = late.seconds()
    assert posts and seconds < OVERRUN, late.describe(seconds)


@pytest.mark.parametrize("instance", list(INSTANCES))
@pytest.mark.parametrize("fault", DEADLINE_FAULTS)
def test_item_3_direct_post_ends_at_the_deadline(instance: str, fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    direct_post_ends_at_the_deadline(fault, monkeypatch, lambda root: _llm(instance, root), "p:m")


def cancelled_mid_read_leaves_nothing(
    monkeypatch: pytest.MonkeyPatch,
    make_client: Callable[[str], llmplex.Client],
    model: str,
    connector_of: Callable[[llmplex.Client], aiohttp.BaseConnector],
) -> None:
    """``model`` on the client ``make_client(root)`` builds, cancelled while a trickled body is arriving: its
    connection is closed (none acquired in ``connector_of(client)``, none pooled) and no task is left behind."""
    reading = asyncio.Event()
    read = aiohttp.ClientResponse.read

    async def spied_read(self: aiohttp.ClientResponse) -> bytes:
        reading.set()
        return await read(self)

    monkeypatch.setattr(aiohttp.ClientResponse, "read", spied_read)

    async def cancel(llm: llmplex.Client) -> tuple[int, int, set[asyncio.Task[Any]]]:
        task = asyncio.create_task(llm.acomplete(model, "hi"))
        await reading.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        connector: Any = connector_of(llm)
        acquired, pooled = len(connector._acquired), sum(len(c) for c in connector._conns.values())
        left = {t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()}
        await llm.aclose()
        return acquired, pooled, left

    with FaultServer(Fault.trickle(0.05), any_path=True) as server, _way(monkeypatch, "direct") as posts:
        acquired, pooled, left = asyncio.run(cancel(make_client(server.url.removesuffix("/v1"))))
    assert posts and (acquired, pooled, left) == (0, 0, set())


@pytest.mark.parametrize("instance", list(INSTANCES))
def test_item_3_cancelled_mid_read_leaves_no_connection_or_task(instance: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cancelled_mid_read_leaves_nothing(
        monkeypatch,
        lambda root: _llm(instance, root),
        "p:m",
        lambda llm: _sdk_client(llm)._client._transport.client.connector,
    )


class _KeepAliveServer:
    """Answers every POST at once with ``body``, on keep-alive connections, from its own event loop."""

    def __init__(self, body: bytes) -> None:
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body)
        self.answer = head + body
        self.ready = threading.Event()
        self.thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)
        self.port = 0

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.stop = asyncio.Event()
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        async with server:
            await self.stop.wait()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line[15:]) for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")
                )
                await reader.readexactly(length)
                writer.write(self.answer)
        writer.close()

    def __enter__(self) -> _KeepAliveServer:
        self.thread.start()
        self.ready.wait(10)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(10)


@pytest.mark.parametrize("instance", list(INSTANCES))
def test_item_3_256_calls_in_flight_all_answer(instance: str, monkeypatch: pytest.MonkeyPatch) -> None:
    async def many(llm: llmplex.Client) -> list[str]:
        answers = await asyncio.gather(*(llm.acomplete("p:m", "hi") for _ in range(256)))
        await llm.aclose()
        return [answer.text for answer in answers]

    with _KeepAliveServer(INSTANCES[instance][2]) as server, _way(monkeypatch, "direct") as posts:
        texts = asyncio.run(many(_llm(instance, f"http://127.0.0.1:{server.port}")))
    assert texts == ["Hello! How can I help?"] * 256 and len(posts) == 256


# -- when httpx must send ----------------------------------------------------------------------------------------


def _library(sdk: Any) -> str:
    """The name of the library (and of its logger) the SDK client sends with: ``httpx`` or ``httpx2``."""
    return http_library(sdk._client).__name__


def _extra_hook(sdk: Any) -> None:
    async def hook(request: Any) -> None:
        request.headers["x-seen"] = "1"

    sdk._client.event_hooks["request"].append(hook)


SETUPS: dict[str, Callable[[Any, pytest.LogCaptureFixture], None]] = {
    "an event hook of the caller's": lambda sdk, caplog: _extra_hook(sdk),
    "a cookie in the client's jar": lambda sdk, caplog: sdk._client.cookies.set("jar", "1"),
    "httpx's request log on": lambda sdk, caplog: caplog.set_level(logging.INFO, logger=_library(sdk)),
}


@pytest.mark.parametrize("setup", list(SETUPS))
def test_item_3_a_client_asking_for_httpx_sends_through_httpx(
    setup: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    body = INSTANCES["openai chat"][2]
    for name in ("httpx", "httpx2"):  # a dictConfig elsewhere in the session may have disabled them
        monkeypatch.setattr(logging.getLogger(name), "disabled", False)

    async def call(llm: llmplex.Client) -> str:
        await llm.acomplete("p:m", "hi")  # the SDK client is built by the first call
        SETUPS[setup](_sdk_client(llm), caplog)
        answer = await llm.acomplete("p:m", "hi")
        await llm.aclose()
        return answer.text

    with StreamServer() as server, _way(monkeypatch, "direct") as posts:
        server.script(Reply.json(200, body))
        assert asyncio.run(call(_llm("openai chat", server.url))) == "Hello! How can I help?"
        last = dict(server.requests[-1].headers)
    assert len(posts) == 1  # the first call only
    assert last.get("x-seen") == "1" or "jar=1" in last.get("cookie", "") or "HTTP Request: POST" in caplog.text
