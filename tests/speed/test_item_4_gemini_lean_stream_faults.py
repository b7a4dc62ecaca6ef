"""Issue 34 item 4: llmplex-gemini's lean stream, continued: errors, faults, deadlines, hostile chunks, the key,
where the lean path falls back to the SDK, and continued streams (both ways, as in
``test_item_4_gemini_lean_stream.py``, whose cases are in ``gemini_stream_cases.py``).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from google import genai
from google.genai import types
from llmplex_gemini import lean as gemini_lean
from llmplex_gemini.clients import close_client, create_async_client, create_client
from llmplex_gemini.settings import GeminiSettings

import llmplex
from llmplex import Deadline, LLMDeadlineExceededError, LLMError, LLMRateLimitError
from tests.plugins.gemini.wire import MODEL, error_body, function_call_part, stream_body, text_part, usage
from tests.speed.gemini_stream_cases import (
    KEY,
    TEXT,
    _both,
    _chunk,
    _config,
    _read,
    _script,
    client,
    read_lean,
    server,
    via,
)
from tests.support.fault_server import Fault, FaultServer
from tests.support.stream_server import Reply, StreamServer

__all__ = ["client", "server", "via"]


def _sse(*chunks: Any) -> bytes:
    return b"".join(f"data: {c if isinstance(c, str) else json.dumps(c)}\r\n\r\n".encode() for c in chunks)


def _hostile(parts: list[dict[str, Any]], usage_metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chunk the SDK's types refuse (the documented builder would refuse it too)."""
    chunk: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}
    if usage_metadata is not None:
        chunk["usageMetadata"] = usage_metadata
    return chunk


def _resumable(parts: list[dict[str, Any]], finish: str | None, token: bytes, **extra: Any) -> dict[str, Any]:
    """A chunk whose candidate carries a ``continuationToken`` (``finish``: ``CONTINUATION``, or ``None`` for a
    checkpoint part way through a request)."""
    chunk = _chunk(parts, finish, **extra)
    chunk["candidates"][0]["continuationToken"] = base64.b64encode(token).decode()
    types.GenerateContentResponse.model_validate(chunk)
    return chunk


RETRY = [
    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaMetric": "requests"}]},
    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"},
]
FIRST = _chunk([text_part("Hi")])
ERRORS: dict[str, Reply] = {
    "HTTP 400": Reply.json(400, json.dumps(error_body(400, "INVALID_ARGUMENT", "bad request")).encode()),
    "HTTP 403": Reply.json(403, json.dumps(error_body(403, "PERMISSION_DENIED", "denied")).encode()),
    "HTTP 429 with retry info": Reply.json(
        429, json.dumps(error_body(429, "RESOURCE_EXHAUSTED", "quota", RETRY)).encode(), {"Retry-After": "5"}
    ),
    "HTTP 500": Reply.json(500, json.dumps(error_body(500, "INTERNAL", "internal")).encode()),
    "HTTP 503 not JSON": Reply.json(503, b"<html>Service Unavailable</html>"),
    "error event mid-stream": Reply.events(_sse(FIRST, error_body(503, "UNAVAILABLE", "overloaded"))),
    "event not JSON": Reply.events(_sse(FIRST, "{not json")),
    "empty event": Reply.events(_sse(FIRST) + b"data: \r\n\r\n"),
    "truncated last event": Reply.events(_sse(FIRST) + b'data: {"candidates": [{"con'),
    "cut mid-stream": Reply.events(_sse(FIRST), ending="cut"),
    "safety stop": Reply.events(_sse(FIRST, _chunk([], "SAFETY"))),
}


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("name", list(ERRORS))
def test_item_4_gemini_stream_errors_are_the_sdks_typed_errors(
    name: str, mode: str, server: StreamServer, client: llmplex.Client, via: Callable[[bool], None]
) -> None:
    sdk, lean = _both(client, server, via, mode, _script(server, ERRORS[name]))
    assert read_lean == (_read(mode) if ERRORS[name].status == 200 else [])
    assert sdk == lean, name
    assert sdk[0] not in ("ok", LLMError)
    if name == "HTTP 429 with retry info":
        assert sdk[0] is LLMRateLimitError and sdk[2] == (429, 37.0)


ODD: dict[str, Reply] = {
    "error event without a code": Reply.events(_sse(FIRST, {"error": {"message": "no code"}})),
    "event that is a list": Reply.events(_sse(FIRST, [1, 2])),
    "event that is a string": Reply.events(_sse(FIRST, '"text"')),
    "unknown field in a part": Reply.events(_sse(FIRST, _hostile([{"text": "x", "bogus": 1}]))),
    "usage that is text": Reply.events(_sse(FIRST, _hostile([], {"promptTokenCount": "x"}))),
    "usage that is a bool": Reply.events(_sse(FIRST, _hostile([], {"promptTokenCount": True}))),
    "unknown finish reason": Reply.events(_sse(FIRST, {"candidates": [{"finishReason": "stop"}]})),
    "thought that is text": Reply.events(_sse(FIRST, _hostile([{"text": "t", "thought": "yes"}]))),
    "NaN usage": Reply.events(_sse(FIRST, '{"usageMetadata": {"promptTokenCount": NaN}}')),
    "modality that is a list": Reply.events(
        _sse(FIRST, {"usageMetadata": {"promptTokensDetails": [{"modality": ["AUDIO"], "tokenCount": 1}]}})
    ),
    "finish reason that is a list": Reply.events(_sse(FIRST, {"candidates": [{"finishReason": ["STOP"]}]})),
}
"""Chunks the SDK's types take oddly or refuse: whatever the SDK makes of each, the lean path makes too."""


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("name", list(ODD))
def test_item_4_hostile_gemini_odd_chunks_end_as_through_the_sdk(
    name: str, mode: str, server: StreamServer, client: llmplex.Client, via: Callable[[bool], None]
) -> None:
    sdk, lean = _both(client, server, via, mode, _script(server, ODD[name]))
    assert read_lean == _read(mode)
    assert sdk == lean, name


def test_item_4_gemini_unterminated_last_event_is_still_read(
    server: StreamServer, client: llmplex.Client, via: Callable[[bool], None]
) -> None:
    """Like the SDK's reader, an event the body ended without a blank line after is read."""
    body = stream_body(TEXT).removesuffix(b"\r\n\r\n")
    sdk, lean = _both(client, server, via, "stream", _script(server, Reply.events(body)))
    assert sdk == lean and lean[1][2] == "stop"


FAULTS: dict[str, Callable[[], Fault]] = {
    "connection reset": Fault.reset,
    "rate limit": lambda: Fault.rate_limit(retry_after=2),
    "server error": Fault.server_error,
}


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_gemini_faults_are_the_same_typed_errors(mode: str, via: Callable[[bool], None]) -> None:
    with FaultServer(any_path=True) as faulty:
        built = llmplex.Client(_config(faulty.url.removesuffix("/v1")), throttle={"max_attempts": 1})
        for name, fault in FAULTS.items():
            sdk, lean = _both(built, faulty, via, mode, lambda f=fault: faulty.enqueue(f()))
            assert sdk == lean and sdk[0] not in ("ok", LLMError), name
        built.close()


@pytest.mark.parametrize("fault", ["trickle", "stall"])
@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_gemini_trickling_or_stalled_stream_ends_at_the_deadline(
    mode: str, fault: str, server: StreamServer, client: llmplex.Client, via: Callable[[bool], None]
) -> None:
    """Warmed up first (the provider client is built within a call's deadline), then held to a 0.6 s deadline:
    the chunks that came are delivered, and the call ends with the deadline."""
    body = stream_body(TEXT * 100)
    reply = Reply.events(body, interval=0.02) if fault == "trickle" else Reply.events(_sse(FIRST), ending="stall")
    via(False)
    server.script(Reply.events(stream_body(TEXT)), reply)
    ended, texts = _warm_then_deadline(client, mode)
    assert read_lean == _read(mode) * 2  # the lean path was the one held to the deadline
    assert ended is LLMDeadlineExceededError
    if fault == "stall":
        assert texts == ["Hi"]


def _warm_then_deadline(client: llmplex.Client, mode: str) -> tuple[type[BaseException] | None, list[str]]:
    """One stream read whole, then one held to a 0.6 s deadline (in one event loop when async): how the second
    ended and the text it delivered."""
    texts: list[str] = []
    model = f"g:{MODEL}"
    if mode == "stream":
        list(client.stream(model, "hi"))
        try:
            texts.extend(e.text or "" for e in client.stream(model, "hi", deadline=Deadline.after(0.6)) if e.text)
        except LLMError as error:
            return type(error), texts
        return None, texts

    async def read() -> type[BaseException] | None:
        [event async for event in client.astream(model, "hi")]
        try:
            async for event in client.astream(model, "hi", deadline=Deadline.after(0.6)):
                texts.extend([event.text] if event.text else [])
        except LLMError as error:
            return type(error)
        return None

    return asyncio.run(read()), texts


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_hostile_gemini_deeply_nested_chunk_fails_alike(
    mode: str, server: StreamServer, client: llmplex.Client, via: Callable[[bool], None]
) -> None:
    """A chunk nested deeper than any JSON reader goes fails the same way both ways, without a crash."""
    deep = "[" * 100_000 + "]" * 100_000
    sdk, lean = _both(client, server, via, mode, _script(server, Reply.events(_sse(FIRST, deep))))
    assert sdk == lean and sdk[0] != "ok" and sdk[-1] == "Hi"


def test_item_4_hostile_gemini_huge_nested_arguments_and_negative_usage(
    server: StreamServer, client: llmplex.Client, via: Callable[[bool], None]
) -> None:
    """Large, deeply nested call arguments and negative token counts come out the same both ways."""
    nested: Any = {"leaf": list(range(2000))}
    for depth in range(200):
        nested = {f"k{depth}": nested, "pad": "x" * 100}
    chunks = [
        _chunk([function_call_part("get_weather", nested)]),
        _chunk([], "STOP", usage_metadata={"promptTokenCount": -5, "candidatesTokenCount": -1, "totalTokenCount": -6}),
    ]
    sdk, lean = _both(client, server, via, "stream", _script(server, Reply.events(stream_body(chunks))))
    assert sdk == lean
    assert read_lean == ["iter_sse"]


ECHOES: dict[str, tuple[Reply, ...]] = {
    "status error": (Reply.json(400, json.dumps(error_body(400, "INVALID_ARGUMENT", f"API key {KEY} bad")).encode()),),
    "error event": (Reply.events(_sse(FIRST, error_body(500, "INTERNAL", f"key={KEY}"))),),
    "not JSON": (Reply.events(_sse(FIRST, f"{{{KEY}")),),
    "status error not JSON": (Reply.json(503, f"<html>upstream said key={KEY}</html>".encode()),),
    "error event after a checkpoint, then an error status": (
        Reply.events(_sse(_resumable([text_part("Hi")], None, b"hop-1"), error_body(500, "INTERNAL", f"key={KEY}"))),
        Reply.json(400, json.dumps(error_body(400, "INVALID_ARGUMENT", f"API key {KEY} bad")).encode()),
    ),
}


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("name", list(ECHOES))
def test_item_4_hostile_gemini_key_echoed_back_never_appears_in_the_error(
    name: str, mode: str, server: StreamServer, client: llmplex.Client, via: Callable[[bool], None]
) -> None:
    sdk, lean = _both(client, server, via, mode, _script(server, *ECHOES[name]))
    assert sdk == lean and lean[0] != "ok"
    assert KEY not in repr(lean)


def test_item_4_gemini_lean_path_only_for_its_own_clients() -> None:
    """A client built elsewhere (a user's, Vertex AI's) or something that is no client: the SDK path."""
    payload: dict[str, Any] = {"model": MODEL, "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    foreign = genai.Client(api_key=KEY)
    vertex = genai.Client(vertexai=True, api_key=KEY)
    for other in (foreign, vertex, object(), None):
        assert gemini_lean.prepare(other, payload, is_async=False) is None
    foreign.close()
    vertex.close()


def test_item_4_hostile_gemini_prepared_lean_call_never_shows_the_key() -> None:
    """The prepared call (in a hook's locals, so in a traceback that shows them) keeps its request out of its repr:
    the request's headers hold the API key."""
    payload: dict[str, Any] = {"model": MODEL, "contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    built = _built({})
    try:
        prepared = gemini_lean.prepare(built, payload, is_async=False)
        assert prepared is not None and prepared.request.headers["x-goog-api-key"] == KEY
        assert KEY not in repr(prepared) and KEY not in str(prepared)
    finally:
        close_client(built)


def _built(settings: dict[str, Any], *, is_async: bool = False) -> Any:
    chosen = GeminiSettings(api_key=KEY, base_url="http://127.0.0.1:9", **settings)
    return (create_async_client if is_async else create_client)(chosen)


@pytest.mark.parametrize(
    ("config", "lean"),
    [
        ({}, True),
        ({"http_options": {"timeout": 5000}}, True),
        ({"automatic_function_calling": {"disable": True}, "tools": [{"function_declarations": []}]}, True),
        ({"http_options": {"headers": {"x-extra": "1"}}}, False),
        ({"http_options": {"retry_options": {"attempts": 3}}}, False),
        ({"tools": [{"function_declarations": [{"name": "f"}]}]}, False),
    ],
)
def test_item_4_gemini_lean_path_falls_back_where_the_sdk_does_more(config: dict[str, Any], lean: bool) -> None:
    payload = {"model": MODEL, "contents": [{"role": "user", "parts": [{"text": "hi"}]}], "config": config}
    sync, async_ = _built({}), _built({}, is_async=True)
    try:
        assert (gemini_lean.prepare(sync, payload, is_async=False) is not None) is lean
        assert (gemini_lean.prepare(async_, payload, is_async=True) is not None) is lean
        assert gemini_lean.prepare(sync, payload, is_async=True) is None  # the sync client has no async transport
    finally:
        close_client(sync)
        asyncio.run(close_client(async_))  # type: ignore[arg-type]


CONTINUED: dict[str, tuple[Reply, ...]] = {
    "continuation finish": (
        Reply.events(
            stream_body(
                [
                    _chunk([text_part("Hel")], usage_metadata=usage(5, 1)),
                    _resumable([text_part("lo")], "CONTINUATION", b"hop-1", usage_metadata=usage(5, 2)),
                ]
            )
        ),
        Reply.events(stream_body([_chunk([text_part(" world")], "STOP", usage_metadata=usage(6, 3))])),
    ),
    "checkpoint, then a cut": (
        Reply.events(_sse(_resumable([text_part("Hel")], None, b"hop-1", usage_metadata=usage(5, 1))), ending="cut"),
        Reply.events(stream_body([_chunk([text_part("lo")], "STOP", usage_metadata=usage(6, 2))])),
    ),
    "continuation turned off": (
        Reply.events(stream_body([_resumable([text_part("Hel")], "CONTINUATION", b"hop-1")])),
        Reply.events(stream_body([_chunk([text_part("lo")], "STOP")])),
    ),
}


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("name", list(CONTINUED))
def test_item_4_gemini_continued_stream_is_followed_as_the_sdk_follows_it(
    name: str, mode: str, server: StreamServer, client: llmplex.Client, via: Callable[[bool], None]
) -> None:
    """A request that ends with a continuation token is not the answer's end: the lean stream hands the rest to
    the SDK with that token (as the SDK's own stream does), the usage of every request summed; with automatic
    continuation turned off, it ends where the SDK's ends."""
    options = {"provider_options": {"automatic_continuation": False}} if name.endswith("off") else {}
    server.requests.clear()
    sdk, lean = _both(client, server, via, mode, _script(server, *CONTINUED[name]), **options)
    assert read_lean == _read(mode)
    assert sdk == lean and sdk[0] == "ok", name
    followed = [json.loads(r.body).get("continuationToken") for r in server.requests]
    if name == "continuation turned off":
        assert followed == [None, None] and lean[2] == "Hel"
    else:
        assert followed == [None, base64.b64encode(b"hop-1").decode()] * 2
        assert lean[2] == ("Hello world" if name == "continuation finish" else "Hello")
        assert lean[1][2] == "stop" and lean[1][3].input_tokens == 11  # both requests' usage
