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
    cancelled_mid_read,
    first_before_second,
    many_in_flight,
    past_the_deadline,
    stopped_early,
    timings_hidden,
    way,
)
from tests.support.fault_server import FaultServer
from tests.support.lean_streams import STREAM_FAULTS
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
    "an error event echoing the key": lambda: [
        Reply.events(
            START
            + _event("error", {"type": "error", "error": {"type": "authentication_error", "message": f"bad {KEY}"}})
        )
    ],
    "a 401 echoing the key": lambda: [
        Reply.json(401, f'{{"type":"error","error":{{"type":"authentication_error","message":"{KEY}"}}}}'.encode())
    ],
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
    went_directly, outcome, closed = cancelled_mid_read(monkeypatch, lean, _llm, START + _text("Hi"))
    assert went_directly and closed and outcome == (0, 0, set())


def test_item_4_anthropic_direct_stream_stopped_early_closes_its_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """A consumer that stops reading after the first text closes the connection of an unfinished body instead of
    pooling it."""
    assert stopped_early(monkeypatch, lean, _llm, START + _text("Hello") * 200) == (True, (0, 0))


def test_item_4_anthropic_direct_stream_hands_on_the_first_chunk_before_the_second_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, rest = START + _text("first"), _text("second") + END
    assert first_before_second(monkeypatch, lean, _llm, first, rest) == (True, ["first", "second"], [True])


def test_item_4_anthropic_many_direct_streams_in_flight_all_end(monkeypatch: pytest.MonkeyPatch) -> None:
    assert many_in_flight(monkeypatch, lean, _llm, BODY) == (64, ["Hello there"] * 64)
