"""Issue 26 item 1: the openai plugin's chat and Responses streams read the SSE through ``llmplex.http.iter_sse`` /
``aiter_sse`` on the SDK client's own HTTP client (``llmplex_openai.lean.stream``/``astream``).

Every promise is checked against what the SDK itself does: the bytes and headers a capture server receives from
the SDK's own ``create(stream=True)``; the typed error each fault gives when the plugin is forced through the SDK
(``transport.suits`` answering ``False``, the path clients the lean path does not suit still take).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
import respx
from llmplex_openai import lean, transport
from llmplex_openai.clients import make_async_client, make_client

import llmplex
from llmplex import LLMDeadlineExceededError, LLMError
from tests.support.fault_server import Fault, FaultServer
from tests.support.lean_streams import STREAM_FAULTS, outcome

KEY = "sk-lean-stream-0123456789abcdef"
USAGE = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
CHAT_EVENTS: list[dict[str, Any]] = [
    {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": {"content": w}}]}
    for w in ("Hello", " there")
]
CHAT_EVENTS += [
    {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    },
    {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [], "usage": USAGE},
]
RESPONSES_EVENTS = [
    {"type": "response.created", "response": {"id": "r1", "model": "m", "output": [], "status": "in_progress"}},
    {"type": "response.output_text.delta", "delta": "Hello", "output_index": 0, "content_index": 0, "item_id": "i"},
    {
        "type": "response.completed",
        "response": {
            "id": "r1",
            "model": "m",
            "status": "completed",
            "output": [],
            "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4},
        },
    },
]


def sse(events: list[dict[str, Any]], *, named: bool = False, done: bool = True) -> bytes:
    frames = [(f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events]
    return ("".join(frames) + ("data: [DONE]\n\n" if done else "")).encode()


@dataclass
class Captured:
    path: str
    headers: list[tuple[str, str]]
    body: bytes
    port: int = 0


@dataclass
class CaptureServer:
    """A local server that records each request's raw headers, body and client port and answers ``reply`` (status,
    SSE body); ``keep_alive`` answers HTTP/1.1 on persistent connections."""

    reply: tuple[int, bytes] = (200, b"")
    keep_alive: bool = False
    seen: list[Captured] = field(default_factory=list)

    def __enter__(self) -> CaptureServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if self.keep_alive else "HTTP/1.0"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.seen.append(Captured(self.path, list(self.headers.items()), body, self.client_address[1]))
                status, content = owner.reply
                kind = "text/event-stream" if status == 200 else "application/json"
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


PAYLOADS = {
    "chat": {
        "model": "m",
        "messages": [{"role": "user", "content": "hi «ünïcode» ✓"}],
        "temperature": 0.5,
        "max_completion_tokens": 16,
        "stream": True,
        "stream_options": {"include_usage": True},
        "top_k": 4,  # a provider option the SDK does not name: its extra_body
    },
    "responses": {"model": "m", "input": [{"type": "message", "role": "user", "content": "hi"}], "stream": True},
}


def _sdk_kwargs(api: str, payload: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    method = transport.Completions.create if api == "chat" else transport.Responses.create
    return transport._kwargs(payload, transport._body_params(method), timeout)


@pytest.mark.parametrize("timeout", [None, 7.5])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_item_1_lean_stream_sends_the_sdks_exact_bytes_and_headers(api: str, timeout: float | None) -> None:
    payload = PAYLOADS[api]
    events = CHAT_EVENTS if api == "chat" else RESPONSES_EVENTS
    with CaptureServer((200, sse(events, named=api == "responses"))) as server:
        client = make_client(server.url, KEY)
        sdk_api = client.chat.completions if api == "chat" else client.responses
        sdk_events = [e.to_dict() for e in sdk_api.create(**_sdk_kwargs(api, payload, timeout))]
        send = transport.send_chat if api == "chat" else transport.send_responses
        lean_events = list(send(client, payload, timeout))

        async def both() -> tuple[list[Any], list[Any]]:
            aclient = make_async_client(server.url, KEY)
            try:
                sdk_aapi = aclient.chat.completions if api == "chat" else aclient.responses
                stream = await sdk_aapi.create(**_sdk_kwargs(api, payload, timeout))
                sdk = [e.to_dict() async for e in stream]
                asend = transport.asend_chat if api == "chat" else transport.asend_responses
                return sdk, [e async for e in await asend(aclient, payload, timeout)]
            finally:
                await aclient.close()

        async_sdk_events, async_lean_events = asyncio.run(both())
        client.close()
    sdk, mine, async_sdk, async_mine = server.seen
    assert mine.path == sdk.path == f"/v1/{'chat/completions' if api == 'chat' else 'responses'}"
    assert mine.body == sdk.body and async_mine.body == async_sdk.body == sdk.body
    assert json.loads(mine.body)["stream"] is True
    assert mine.headers == sdk.headers  # names, values, order
    assert async_mine.headers == async_sdk.headers
    assert ("Authorization", f"Bearer {KEY}") in mine.headers
    assert lean_events == sdk_events == events  # plain dicts, the SDK's fields as sent
    assert all(type(e) is dict for e in lean_events + async_lean_events)
    assert async_lean_events == async_sdk_events == events


# --- errors: the same typed errors as through the SDK ------------------------------------------------------------


def _outcome(url: str, api: str, mode: str, **kwargs: Any) -> tuple[type[BaseException], str, str]:
    """The error (type, message) a stream ends with, and the text it delivered first."""
    config = {"providers": {"t": {"plugin": "openai", "base_url": url, "api": api, "api_key": KEY}}}
    return outcome(config, "t:m", mode, **kwargs)


lean_opened: list[str] = []


@pytest.fixture
def through_sdk(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], None]:
    """Choose the SDK (``True``) or the lean path; each lean stream opened is counted in ``lean_opened``."""
    lean_opened.clear()

    def counted(name: str) -> Any:
        def opened(*args: Any) -> Any:
            lean_opened.append(name)
            return getattr(lean, name)(*args)

        return opened

    monkeypatch.setattr(transport, "stream", counted("stream"))
    monkeypatch.setattr(transport, "astream", counted("astream"))

    def choose(sdk: bool) -> None:
        monkeypatch.setattr(transport, "suits", (lambda client: False) if sdk else lean.suits)

    return choose


ERROR_BODIES = {
    "HTTP 429": (429, json.dumps({"error": {"message": "slow down", "type": "requests", "code": "rate_limit"}})),
    "HTTP 500": (500, json.dumps({"error": {"message": "oops", "type": "server_error", "code": None}})),
    "HTTP 400 context": (
        400,
        json.dumps(
            {"error": {"message": "too long", "type": "invalid_request_error", "code": "context_length_exceeded"}}
        ),
    ),
    "in-stream error data": (
        200,
        'data: {"id":"c","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
        'data: {"error":{"message":"overloaded","type":"server_error","code":"overloaded"}}\n\n',
    ),
    "event: error": (
        200,
        'data: {"id":"c","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
        'event: error\ndata: {"error":{"message":"quota gone","type":"insufficient_quota",'
        '"code":"insufficient_quota"}}\n\n',
    ),
    "Responses error event": (
        200,
        'event: error\ndata: {"type":"error","code":"server_error","message":"the model failed","param":null}\n\n',
    ),
    "not JSON": (200, 'data: {"id":"c","choices":[]}\n\ndata: {not json\n\n'),
}


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("name", list(ERROR_BODIES))
def test_item_1_stream_errors_are_the_sdks_typed_errors(
    name: str, mode: str, through_sdk: Callable[[bool], None]
) -> None:
    status, body = ERROR_BODIES[name]
    api = "responses" if name.startswith("Responses") else "chat"
    outcomes = []
    with CaptureServer((status, body.encode())) as server:
        for sdk in (True, False):
            through_sdk(sdk)
            outcomes.append(_outcome(server.url, api, mode))
        assert len(server.seen) == 2
    assert lean_opened == [mode]
    if name == "not JSON":  # the message quotes the JSON decoder's own words (the SDK's json, orjson here)
        assert outcomes[0][0] is outcomes[1][0] and outcomes[0][2] == outcomes[1][2]
        assert "is not valid JSON" in outcomes[1][1]
    else:
        assert outcomes[0] == outcomes[1], name
    assert outcomes[1][0] is not LLMError


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("name", list(STREAM_FAULTS))
def test_item_1_faults_mid_stream_are_the_same_typed_errors(
    name: str, mode: str, through_sdk: Callable[[bool], None]
) -> None:
    outcomes = []
    with FaultServer() as server:
        for sdk in (True, False):
            through_sdk(sdk)
            server.enqueue(STREAM_FAULTS[name]())
            outcomes.append(_outcome(server.url, "chat", mode))
    assert lean_opened == [mode]
    assert outcomes[0][0] is outcomes[1][0], name
    assert outcomes[0][2] == outcomes[1][2]  # the text delivered before the failure


@pytest.mark.parametrize("fault", ["trickle", "stall"])
@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_1_a_trickling_or_stalled_stream_ends_at_the_deadline(
    mode: str, fault: str, through_sdk: Callable[[bool], None]
) -> None:
    """A server that sends one byte every 50 ms (or stops after two events) cannot hold the stream past the
    deadline: ``LLMDeadlineExceededError`` both ways, well before the server would have finished."""
    chosen = Fault.trickle(interval=0.05) if fault == "trickle" else Fault.stream_stall(after_events=2, seconds=5)
    outcomes = []
    with FaultServer() as server:
        for sdk in (True, False):
            through_sdk(sdk)
            server.enqueue(chosen)
            outcomes.append(_outcome(server.url, "chat", mode, deadline_after=2.0)[0])
    assert lean_opened == [mode]
    assert outcomes == [LLMDeadlineExceededError, LLMDeadlineExceededError]


# --- closing --------------------------------------------------------------------------------------------------------


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The responses the lean path opened (``httpx`` ``send`` of either client, and async streams opened on
    aiohttp by ``llmplex.http.direct_stream.open_stream``, recorded)."""
    responses: list[Any] = []
    for cls in (httpx.Client, httpx.AsyncClient):
        original = cls.send

        if cls is httpx.Client:

            def send(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
                response = _original(self, *args, **kwargs)
                responses.append(response)
                return response

        else:

            async def send(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
                response = await _original(self, *args, **kwargs)
                responses.append(response)
                return response

        monkeypatch.setattr(cls, "send", send)
    direct = lean.open_stream

    async def open_direct(*args: Any, **kwargs: Any) -> Any:  # async streams open straight on aiohttp
        response = await direct(*args, **kwargs)
        responses.append(response)
        return response

    monkeypatch.setattr(lean, "open_stream", open_direct)
    return responses


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_item_1_the_response_is_closed_when_the_consumer_stops_early(api: str, opened: list[Any]) -> None:
    events = CHAT_EVENTS if api == "chat" else RESPONSES_EVENTS
    many = sse(events[:1] * 200 + events[1:], named=api == "responses")
    config = {"providers": {"t": {"plugin": "openai", "base_url": "", "api": api, "api_key": KEY}}}
    with CaptureServer((200, many)) as server:
        config["providers"]["t"]["base_url"] = server.url
        client = llmplex.Client(config)
        stream = client.stream("t:m", "hi")
        assert next(iter(stream)).type == "text"
        stream.close()

        async def early() -> None:
            astream = client.astream("t:m", "hi")
            async for event in astream:
                assert event.type == "text"
                break
            await astream.aclose()

        asyncio.run(early())
    assert len(opened) == 2
    assert [r.is_closed for r in opened] == [True, True]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_item_1_a_respx_mocked_transport_still_gets_the_stream(api: str) -> None:
    """respx patches httpx's transport: the lean stream goes through it (sync, and async, whose client is then the
    SDK's plain httpx client), and what it answers is what the stream yields."""
    events = CHAT_EVENTS if api == "chat" else RESPONSES_EVENTS
    path = "chat/completions" if api == "chat" else "responses"
    base = "http://127.0.0.1:8933/v1"
    with respx.mock(assert_all_called=True) as mock:
        route = mock.post(f"{base}/{path}").mock(
            return_value=httpx.Response(200, content=sse(events), headers={"content-type": "text/event-stream"})
        )
        config = {"providers": {"t": {"plugin": "openai", "base_url": base, "api": api, "api_key": KEY}}}
        client = llmplex.Client(config)
        texts = [e.text for e in client.stream("t:m", "hi") if e.type == "text"]

        async def adrain() -> list[str | None]:
            return [e.text async for e in client.astream("t:m", "hi") if e.type == "text"]

        atexts = asyncio.run(adrain())
    expected = ["Hello", " there"] if api == "chat" else ["Hello"]
    assert texts == atexts == expected
    assert route.call_count == 2
    assert json.loads(route.calls[0].request.content)["stream"] is True


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_item_1_a_finished_stream_gives_its_connection_back(api: str) -> None:
    """The body is read to its end (after ``[DONE]`` too), so the next stream of the client reuses the connection
    instead of opening a new one, sync and async."""
    events = CHAT_EVENTS if api == "chat" else RESPONSES_EVENTS
    send = transport.send_chat if api == "chat" else transport.send_responses
    asend = transport.asend_chat if api == "chat" else transport.asend_responses
    with CaptureServer((200, sse(events, named=api == "responses")), keep_alive=True) as server:
        client = make_client(server.url, KEY)
        assert [list(send(client, PAYLOADS[api], None)) for _ in range(3)] == [events] * 3
        client.close()

        async def three() -> list[list[Any]]:
            aclient = make_async_client(server.url, KEY)
            try:
                return [[e async for e in await asend(aclient, PAYLOADS[api], None)] for _ in range(3)]
            finally:
                await aclient.close()

        assert asyncio.run(three()) == [events] * 3
    ports = [seen.port for seen in server.seen]
    assert len(set(ports[:3])) == 1 and len(set(ports[3:])) == 1, ports


def test_item_1_the_first_event_of_a_chunk_is_handed_on_before_the_rest_is_read() -> None:
    """A server that writes a whole answer in one chunk: its first event comes out before the later lines
    are read (an oversized later event is only found when the consumer gets that far), and ``feed`` still
    returns every event of the chunk."""
    from llmplex.errors import LLMServerError
    from llmplex.http import SSEDecoder

    chunk = b"data: one\n\ndata: two\n\ndata: " + b"x" * 100
    decoder = SSEDecoder(max_event_bytes=64)
    events = decoder.events(chunk)
    assert next(events).data == "one"
    assert next(events).data == "two"
    with pytest.raises(LLMServerError, match="longer than 64 bytes"):
        next(events)
    assert [event.data for event in SSEDecoder().feed(b"data: one\n\ndata: two\n\n")] == ["one", "two"]
