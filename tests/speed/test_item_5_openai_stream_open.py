"""Issue 34 item 5: llmplex-openai opens a stream with its client's own work done once, as ``apost`` posts a whole
answer. The async stream, sent straight on the aiohttp session, hands on its client's own httpx timeouts and the
SDK's headers as the same objects on every stream (no ``Timeout(...).as_dict()`` and no header list a stream, so
``llmplex.http.direct``'s sender tells a client's repeat by identity), and neither the async nor the sync stream
wraps its send in a generator context manager; a stream with a timeout of its own still announces and keeps it, and
a failure to connect is still the SDK's error."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import openai
import pytest
from llmplex_openai import lean

import llmplex
from tests.speed.direct_opens import astreams, spy_opens
from tests.support.stream_server import Reply, StreamServer


def _chunk(delta: dict[str, str], end: str | None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": end}
    event = {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return b"data: " + json.dumps(event).encode() + b"\n\n"


_BODY = _chunk({"content": "Hello"}, None) + _chunk({}, "stop") + b"data: [DONE]\n\n"


def _llm(root: str) -> llmplex.Client:
    provider = {"plugin": "openai", "base_url": f"{root}/v1", "api": "chat", "api_key": "sk-x"}
    return llmplex.Client(providers={"p": provider}, throttle={"max_attempts": 1})


def _spy_opens(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any]]:
    """The headers and timeouts each direct open was handed; a context manager around a send fails the test."""

    def refused(http: object, request: Any) -> Any:
        raise AssertionError("a context manager around the stream's send")

    monkeypatch.setattr(lean, "_sdk_errors", refused)
    return spy_opens(monkeypatch)


def test_item_5_openai_async_stream_hands_on_its_clients_timeouts_and_headers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened = _spy_opens(monkeypatch)
    with StreamServer() as server:
        server.script(*[Reply.events(_BODY)] * 3)
        texts = astreams(_llm(server.url), [None, None, None])
        sent = [dict(request.headers).get("x-stainless-read-timeout") for request in server.requests]
    assert texts == ["Hello"] * 3
    assert len(opened) == 3
    assert opened[0][0] is opened[1][0] is opened[2][0]
    assert opened[0][1] is opened[1][1] is opened[2][1]
    assert sent[0] == sent[1] == sent[2]


def test_item_5_openai_async_stream_with_a_timeout_sends_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = _spy_opens(monkeypatch)
    with StreamServer() as server:
        server.script(*[Reply.events(_BODY)] * 2)
        texts = astreams(_llm(server.url), [None, 30])
        first, second = (dict(request.headers).get("x-stainless-read-timeout") for request in server.requests)
    assert texts == ["Hello"] * 2
    assert 0 < float(second or 0) <= 30 and first != second
    assert opened[0][1]["read"] != opened[1][1]["read"] and 0 < opened[1][1]["read"] <= 30


def test_item_5_openai_sync_stream_sends_without_a_context_manager(monkeypatch: pytest.MonkeyPatch) -> None:
    _spy_opens(monkeypatch)
    with StreamServer() as server:
        server.script(Reply.events(_BODY))
        llm = _llm(server.url)
        try:
            texts = [event.text for event in llm.stream("p:m", "hi") if event.type == "text"]
        finally:
            llm.close()
    assert texts == ["Hello"]


@pytest.mark.parametrize("asynchronous", [False, True])
def test_item_5_openai_stream_that_cannot_connect_is_the_sdks_error(asynchronous: bool) -> None:
    with StreamServer() as server:
        url = server.url
    llm = _llm(url)

    async def aread() -> None:
        try:
            async for _ in llm.astream("p:m", "hi"):
                pass
        finally:
            await llm.aclose()

    def read() -> None:
        try:
            for _ in llm.stream("p:m", "hi"):
                pass
        finally:
            llm.close()

    with pytest.raises(llmplex.LLMError) as failed:
        asyncio.run(aread()) if asynchronous else read()
    assert isinstance(failed.value.__cause__, openai.APIConnectionError)
