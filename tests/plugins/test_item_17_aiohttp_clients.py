"""Issue 17: the async clients of the openai and anthropic plugins send through the SDK's aiohttp backend
(``llmplex.http.sdk_async_client``) and keep every promise of the httpx path: typed errors with the same
classification, the deadline over the whole response, no key in any error, clients closed with their loop.

Every call here goes over a real socket to a local server (``FaultServer``) or to a closed port.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import socket
import traceback
from collections.abc import Callable, Iterator
from types import MappingProxyType
from typing import Any, NamedTuple

import anthropic
import httpx
import httpx2
import openai
import pytest
import respx
from llmplex_anthropic.clients import create_async_client as anthropic_async_client
from llmplex_anthropic.settings import AnthropicSettings
from llmplex_openai.clients import make_async_client

import llmplex
from llmplex import Deadline, LLMConnectionError, LLMDeadlineExceededError, LLMError, LLMServerError
from llmplex.http import library_transport_replaced, sdk_async_client
from llmplex.masking.values import REDACTED, redact
from tests.support.fault_server import Fault, FaultServer
from tests.support.late import Late
from tests.support.socket_server import SocketServer

KEY = "sk-aiohttp-test-5f1e2d3c4b5a69788796"
T, OVERRUN = 0.6, 0.05
"""The deadline of the deadline tests, and the slack past it on a loaded 2-core machine."""

INSTANCES = {
    "openai chat": lambda url: {"plugin": "openai", "base_url": url, "api": "chat", "api_key": KEY},
    "openai responses": lambda url: {"plugin": "openai", "base_url": url, "api": "responses", "api_key": KEY},
    "anthropic": lambda url: {"plugin": "anthropic", "base_url": url.removesuffix("/v1"), "api_key": KEY},
}


def _llm(instance: str, url: str) -> llmplex.Client:
    return llmplex.Client(providers={"p": INSTANCES[instance](url)}, throttle={"max_attempts": 1})


def _transport_of(sdk_client: Any) -> Any:
    return sdk_client._client._transport


def _causes(error: BaseException) -> Iterator[BaseException]:
    seen: BaseException | None = error
    while seen is not None:
        yield seen
        seen = seen.__cause__ or seen.__context__


# -- which transport ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_item_17_async_clients_send_through_the_sdks_aiohttp_transport(sdk: str) -> None:
    async def build() -> Any:
        if sdk == "openai":
            client: Any = make_async_client("http://127.0.0.1:9/v1", KEY)
        else:
            client = anthropic_async_client(AnthropicSettings(api_key=KEY, base_url="http://127.0.0.1:9"))
        transport = _transport_of(client)
        hooks = len(client._client.event_hooks["request"]), len(client._client.event_hooks["response"])
        await client.close()
        return transport, hooks

    transport, hooks = asyncio.run(build())
    assert type(transport).__name__ == "AiohttpTransport" and "httpx_aiohttp" in type(transport).__module__
    assert hooks == (1, 1)  # honour_deadline's two hooks: the deadline holds on this client too
    assert transport.client is None  # the aiohttp session opens with the first request, inside its loop


def test_item_17_a_test_double_on_the_library_transport_keeps_the_library_transport(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """respx (httpcore's pool) and a monkeypatched ``httpx2.AsyncHTTPTransport`` see every request, as under the
    SDK: the client keeps the library's own transport then."""
    assert not library_transport_replaced(httpx) and not library_transport_replaced(httpx2)

    async def transport_of(sdk: Any) -> Any:
        client = sdk_async_client(sdk)
        transport = client._transport
        await client.aclose()
        return transport

    with respx.mock:
        assert library_transport_replaced(httpx)
        assert type(asyncio.run(transport_of(openai))) is openai.DefaultAsyncHttpxClient()._transport.__class__
    assert not library_transport_replaced(httpx)

    async def fake(self: Any, request: Any) -> Any:
        return httpx2.Response(204)

    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", fake)
    assert library_transport_replaced(httpx2)
    assert isinstance(asyncio.run(transport_of(anthropic)), httpx2.AsyncHTTPTransport)


# -- failures keep their classification ---------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("instance", list(INSTANCES))
@pytest.mark.parametrize("fault", ["refused", "reset", "closed without an answer"])
def test_item_17_aiohttp_connection_failures_are_connection_errors_not_timeouts(instance: str, fault: str) -> None:
    """httpx-aiohttp 0.2.0 calls every aiohttp connection error a ``ConnectTimeout``; llmplex corrects its table,
    so a dead or vanishing server is an ``LLMConnectionError``, as on the httpx path. No key in any cause."""

    def run(url: str) -> LLMError:
        with pytest.raises(LLMError) as caught:
            asyncio.run(_llm(instance, url).acomplete("p:m", "hi"))
        return caught.value

    if fault == "refused":
        error = run(f"http://127.0.0.1:{_closed_port()}/v1")
    else:
        with FaultServer(Fault.reset() if fault == "reset" else Fault.hang(0), any_path=True) as server:
            error = run(server.url)
    assert type(error) is LLMConnectionError, repr(error)
    for cause in _causes(error):
        assert KEY not in f"{cause!r} {cause}" and KEY[-12:] not in f"{cause!r} {cause}"


@pytest.mark.parametrize("instance", list(INSTANCES))
@pytest.mark.parametrize("fault", ["trickled headers", "trickled body", "silence"])
def test_item_17_aiohttp_path_ends_slow_answers_at_the_deadline(instance: str, fault: str) -> None:
    """aiohttp's per-read timeout resets with each byte; the call still ends at its deadline."""
    faults = {"trickled headers": Fault.trickle_headers(0.1), "trickled body": Fault.trickle(0.1)}
    with FaultServer(faults.get(fault, Fault.hang(30)), any_path=True) as server:
        llm = _llm(instance, server.url)
        deadline = Deadline.after(T)
        late = Late(deadline)  # the time a busy machine keeps the caller waiting for a CPU is not counted

        async def call() -> object:
            late.on_loop()
            return await llm.acomplete("p:m", "hi", deadline=deadline)

        with pytest.raises(LLMDeadlineExceededError):
            asyncio.run(call())
        seconds = late.seconds()
    assert seconds < OVERRUN, late.describe(seconds)


def _raw_server(reply: Callable[[bytes], bytes]) -> SocketServer:
    """Answers every connection with ``reply(request bytes)`` (raw bytes, HTTP or not), then closes it."""
    return SocketServer(lambda connection, _: connection.sendall(reply(connection.recv(65536))))


def _authorization(request: bytes) -> bytes:
    """The credential header's value, as the client sent it (``Authorization`` or ``x-api-key``)."""
    for line in request.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() in (b"authorization", b"x-api-key"):
            return value.strip()
    raise AssertionError(f"no credential header in {request[:200]!r}")


NOT_HTTP = {
    "not HTTP at all": lambda request: b"HELLO THERE\r\n\r\n",
    "the key echoed in the status line": lambda request: b"HELLO " + _authorization(request) + b"\r\n\r\n",
    "the key echoed before a broken header": lambda request: (
        b"HTTP/1.1 200 OK\r\nX-Echo: " + _authorization(request) + b"\r\nBroken Header\r\n\r\n"
    ),
    "two content lengths": lambda request: b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello",
}


@pytest.mark.parametrize("instance", list(INSTANCES))
@pytest.mark.parametrize("answer", list(NOT_HTTP))
def test_item_17_a_server_that_does_not_speak_http_is_a_connection_error_without_the_key(
    instance: str, answer: str
) -> None:
    """aiohttp's parser errors carry the request's headers (``RequestInfo``, read-only ``CIMultiDictProxy``);
    a hostile server can echo the key into the error's message too. Neither reaches the caller."""
    with _raw_server(NOT_HTTP[answer]) as server, pytest.raises(LLMError) as caught:
        asyncio.run(_llm(instance, f"{server.root}/v1").acomplete("p:m", "hi"))
    error = caught.value
    assert type(error) is LLMConnectionError, repr(error)
    shown = "".join(traceback.format_exception(error))
    for cause in _causes(error):
        shown += f"{cause!r} {cause} {vars(cause)!r} {cause.args!r}"
    assert KEY[-12:] not in shown


def _http_answer(body: bytes, content_type: bytes) -> Callable[[bytes], bytes]:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
    return lambda request: head % (content_type, len(body)) + body


_DEEP = b"[" * 5000 + b"]" * 5000
NOT_JSON = {
    "an HTML page": (b"<html>gateway says hi</html>", b"text/html"),
    "JSON cut short": (b'{"id": "msg_1", "cont', b"application/json"),
    "JSON nested 5000 deep": (_DEEP, b"application/json"),
    "an event whose data is not JSON": (b"event: message_start\ndata: {nope\n\n", b"text/event-stream"),
    "an event nested 5000 deep": (b"event: message_start\ndata: " + _DEEP + b"\n\n", b"text/event-stream"),
}


@pytest.mark.parametrize("instance", list(INSTANCES))
@pytest.mark.parametrize("answer", list(NOT_JSON))
@pytest.mark.parametrize("mode", ["complete", "acomplete", "stream", "astream"])
def test_item_17_an_answer_that_is_not_json_is_a_server_error(instance: str, answer: str, mode: str) -> None:
    """The lean paths decode with orjson/json, the SDK's streams with json: a 200 whose body or event is not JSON,
    or is nested past the decoder's limit, is an ``LLMServerError`` on every path, not an unexpected failure."""

    async def drain(llm: llmplex.Client) -> None:
        async for _event in llm.astream("p:m", "hi"):
            pass

    calls: dict[str, Callable[[llmplex.Client], object]] = {
        "complete": lambda llm: llm.complete("p:m", "hi"),
        "acomplete": lambda llm: asyncio.run(llm.acomplete("p:m", "hi")),
        "stream": lambda llm: list(llm.stream("p:m", "hi")),
        "astream": lambda llm: asyncio.run(drain(llm)),
    }
    with _raw_server(_http_answer(*NOT_JSON[answer])) as server:
        llm = _llm(instance, f"{server.root}/v1")
        with pytest.raises(LLMError) as caught:
            calls[mode](llm)
    assert type(caught.value) is LLMServerError, repr(caught.value)


# -- lifecycle -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("instance", list(INSTANCES))
def test_item_17_aiohttp_sessions_close_with_the_client_and_with_the_loop(
    instance: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``aclose()`` closes the aiohttp session; so does the end of ``asyncio.run`` without it. Nothing is left
    for the garbage collector to report as an unclosed session."""
    sessions: list[Any] = []

    async def call(llm: llmplex.Client, close: bool) -> None:
        with contextlib.suppress(LLMError):  # the server answers in OpenAI's format: anthropic cannot parse it
            await llm.acomplete("p:m", "hi")
        (route,) = llm.router.instances()
        sessions.append(_transport_of(route.clients.get(asynchronous=True)).client)
        if close:
            await llm.aclose()
            assert sessions[-1].closed

    with caplog.at_level(logging.ERROR, logger="asyncio"), FaultServer(any_path=True) as server:
        llm = _llm(instance, server.url)
        asyncio.run(call(llm, close=True))
        asyncio.run(call(llm, close=False))
        asyncio.run(call(llm, close=False))  # a new loop: a new client; the last loop's closed at its end
        gc.collect()
    assert len({id(session) for session in sessions}) == 3 and all(session.closed for session in sessions)
    assert "Unclosed" not in caplog.text


def test_item_17_redact_masks_read_only_mappings_and_returns_clean_ones_unchanged() -> None:
    """The unit under the test above: ``redact`` walks a read-only mapping (a NamedTuple holding it too)."""

    class Info(NamedTuple):
        url: str
        headers: Any

    secret = MappingProxyType({"Authorization": f"Bearer {KEY}", "X-Echo": f"key={KEY}", "Accept": "*/*"})
    masked = redact(Info("http://127.0.0.1/v1", secret))
    assert masked.headers["Authorization"] == REDACTED and KEY not in repr(masked)
    assert masked.headers["Accept"] == "*/*" and type(masked) is Info
    clean = MappingProxyType({"Accept": "*/*"})
    assert redact(clean) is clean
