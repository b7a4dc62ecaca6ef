"""Issue 34 item 5: an async lean stream of llmplex-openai (so the openai-compatible presets and the gateway's
streams) is opened and read straight on the aiohttp session under the SDK's aiohttp-backed client
(``llmplex.http.direct_stream``), skipping httpx2's request, ``send``, response and stream wrappers, as whole
answers already do (``direct_sender``), and keeps every promise of the httpx path.

Each behaviour runs both ways: ``direct`` (the default) and ``httpx`` (``DirectSender.usable`` forced false); a spy
on ``lean.open_stream`` says which way a stream went. Every stream goes over a real socket to a local server.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Callable
from typing import Any

import pytest
from llmplex_openai import lean

import llmplex
from llmplex import LLMError
from tests.support.direct_streams import (
    DEADLINE_FAULTS,
    OVERRUN,
    both,
    cancelled_mid_read,
    first_before_second,
    many_in_flight,
    past_the_deadline,
    stopped_early,
    timings_hidden,
)
from tests.support.fault_server import FaultServer
from tests.support.lean_streams import STREAM_FAULTS
from tests.support.stream_server import Reply, StreamServer

KEY = "sk-direct-stream-0a1b2c3d4e5f6071"


def _chunk(text: str | None, finish: str | None = None) -> bytes:
    delta = {} if text is None else {"content": text}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    event = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return b"data: " + json.dumps(event).encode() + b"\n\n"


BODY = _chunk("Hello") + _chunk(" there") + _chunk(None, "stop") + b"data: [DONE]\n\n"


def _llm(root: str, api: str = "chat") -> llmplex.Client:
    provider = {"plugin": "openai", "base_url": f"{root}/v1", "api": api, "api_key": KEY}
    return llmplex.Client(providers={"p": provider}, throttle={"max_attempts": 1})


def _ending(llm: llmplex.Client, **kwargs: Any) -> tuple[object, ...]:
    """The texts a stream delivered, and how it ended: ``"ok"`` or its error's type, text and status."""
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
        return tuple(texts), type(error), str(error), error.context.get("status_code")
    return tuple(texts), "ok"


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_item_5_direct_stream_sends_the_same_request_and_yields_the_same_events(
    api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = BODY
    if api == "responses":
        events = [
            {"type": "response.created", "response": {"id": "r1", "model": "m", "output": [], "status": "x"}},
            {"type": "response.output_text.delta", "delta": "Hello", "output_index": 0, "content_index": 0},
            {"type": "response.completed", "response": {"id": "r1", "model": "m", "status": "completed"}},
        ]
        body = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)
    with StreamServer() as server:
        server.script(Reply.events(body))
        direct, through_httpx = both(monkeypatch, lean, lambda: _ending(_llm(server.url, api)))
        first, second = server.requests
    assert direct == through_httpx and direct[-1] == "ok" and direct[0]
    assert (first.path, first.body) == (second.path, second.body)
    assert timings_hidden(first.headers) == timings_hidden(second.headers)


ANSWERS: dict[str, Callable[[], list[Reply]]] = {
    "a 429 with Retry-After": lambda: [Reply.json(429, b'{"error":{"message":"slow"}}', {"Retry-After": "7"})],
    "a 400 context error": lambda: [
        Reply.json(400, b'{"error":{"message":"too long","code":"context_length_exceeded"}}')
    ],
    "a 500 in JSON": lambda: [Reply.json(500, b'{"error":{"message":"boom","type":"server_error"}}')],
    "a 404 in HTML": lambda: [Reply(404, (b"<html>no</html>",), "text/html")],
    "an error event": lambda: [
        Reply.events(_chunk("Hi") + b'data: {"error":{"message":"overloaded","code":"overloaded"}}\n\n')
    ],
    "malformed JSON": lambda: [Reply.events(_chunk("Hi") + b"data: {not json\n\n")],
    "a gzip-encoded stream": lambda: [
        Reply(200, (gzip.compress(BODY),), "text/event-stream", (("Content-Encoding", "gzip"),))
    ],
    "a cookie set": lambda: [Reply(200, (BODY,), "text/event-stream", (("Set-Cookie", "seen=1; Path=/"),))],
    "a 307 redirect": lambda: [
        Reply(307, (b"",), "text/plain", (("Location", "/v1/chat/completions"),)),
        Reply.events(BODY),
    ],
    "cut mid-stream": lambda: [Reply.events(_chunk("Hi") + b"data: {", ending="cut")],
}


@pytest.mark.parametrize("answer", list(ANSWERS))
def test_item_5_direct_stream_errors_are_the_sdks_exceptions_as_through_httpx(
    answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error status, an error event, a body that is not JSON, a cut, an encoded body, a cookie, a redirect:
    the caller sees what it saw through httpx (the SDK's typed error, classified the same)."""
    with StreamServer() as server:

        def run() -> tuple[object, ...]:
            server.script(*ANSWERS[answer]())
            return _ending(_llm(server.url))

        direct, through_httpx = both(monkeypatch, lean, run)
    assert direct == through_httpx
    assert direct[1] is not LLMError and KEY not in repr(direct)


@pytest.mark.parametrize("fault", list(STREAM_FAULTS))
def test_item_5_direct_stream_faults_end_alike_both_ways(fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with FaultServer() as server:

        def run() -> tuple[object, ...]:
            server.enqueue(STREAM_FAULTS[fault]())
            return _ending(_llm(server.url.removesuffix("/v1")))

        direct, through_httpx = both(monkeypatch, lean, run)
    assert direct == through_httpx and direct[-1] != "ok"


@pytest.mark.parametrize("fault", list(DEADLINE_FAULTS))
def test_item_5_direct_stream_ends_at_the_deadline(fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with FaultServer(DEADLINE_FAULTS[fault](), any_path=True) as server:
        went_directly, seconds, late = past_the_deadline(monkeypatch, lean, _llm(server.url.removesuffix("/v1")))
    assert went_directly and seconds < OVERRUN, late.describe(seconds)


def test_item_5_direct_stream_cancelled_mid_read_closes_the_upstream(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream cancelled while it waits for the upstream's next bytes (the gateway's client left): its
    connection is closed (none acquired, none pooled), the server sees it closed, no task is left behind."""
    went_directly, outcome, closed = cancelled_mid_read(monkeypatch, lean, _llm, _chunk("Hi"))
    assert went_directly and closed and outcome == (0, 0, set())


def test_item_5_direct_stream_stopped_early_closes_its_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """A consumer that stops reading (``aclose`` after the first text) closes the kept-alive connection of an
    unfinished body instead of pooling it."""
    assert stopped_early(monkeypatch, lean, _llm, _chunk("Hello") * 200) == (True, (0, 0))


def test_item_5_the_first_chunk_is_handed_on_before_the_upstream_sends_its_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The upstream sends its first event and waits for the caller to have it before it sends the rest: a
    reader that waited for more bytes (a fixed read size, a buffer to fill) would make it wait out its bound."""
    rest = _chunk("second") + _chunk(None, "stop") + b"data: [DONE]\n\n"
    assert first_before_second(monkeypatch, lean, _llm, _chunk("first"), rest) == (True, ["first", "second"], [True])


def test_item_5_many_direct_streams_in_flight_all_end(monkeypatch: pytest.MonkeyPatch) -> None:
    assert many_in_flight(monkeypatch, lean, _llm, BODY) == (64, ["Hello there"] * 64)
