"""Issue 34 item 3: llmplex-openai's async whole answer, posted straight on the aiohttp session, keeps the httpx
timeouts of its client's own timeout (built on the first call, not on every call) and maps a failure to the SDK's
error without a generator context manager around each post; a call with a timeout of its own still sends it."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest

import llmplex
from llmplex.http.direct import DirectSender
from tests.contract import fixtures_openai as fx
from tests.speed.direct_posts import spy_direct_posts
from tests.support.openai_wire import CHAT_PATH, success_body
from tests.support.stream_server import Reply, StreamServer

_ANSWER = success_body(CHAT_PATH, {"model": "m"}, "Hello!", fx.TokenUsage())


def _calls(server: StreamServer, timeouts: list[float | None]) -> list[llmplex.Response]:
    llm = llmplex.Client(
        providers={"p": {"plugin": "openai", "base_url": f"{server.url}/v1", "api": "chat", "api_key": "sk-x"}},
        throttle={"max_attempts": 1},
    )

    async def calls() -> list[llmplex.Response]:
        try:
            return [await llm.acomplete("p:m", "hi", timeout=timeout) for timeout in timeouts]
        finally:
            await llm.aclose()

    return asyncio.run(calls())


def test_item_3_core_openai_direct_post_keeps_its_clients_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    posted = spy_direct_posts(monkeypatch)
    with StreamServer() as server:
        server.script(*[Reply.json(200, _ANSWER)] * 3)
        answers = _calls(server, [None, None, None])
        sent = [dict(request.headers).get("x-stainless-read-timeout") for request in server.requests]
    assert [answer.text for answer in answers] == ["Hello!"] * 3
    assert posted[0] is posted[1] is posted[2]
    assert sent[0] == sent[1] == sent[2]


def test_item_3_core_openai_direct_post_with_a_timeout_sends_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    posted: list[dict[str, Any]] = []
    post = DirectSender.post

    async def spy(self: DirectSender, url: str, headers: Any, body: bytes, timeout: Any, request: Any) -> Any:
        posted.append(dict(timeout))
        return await post(self, url, headers, body, timeout, request)

    monkeypatch.setattr(DirectSender, "post", spy)
    with StreamServer() as server:
        server.script(*[Reply.json(200, _ANSWER)] * 2)
        _calls(server, [None, 30])
        first, second = (dict(request.headers).get("x-stainless-read-timeout") for request in server.requests)
    assert 0 < float(second or 0) <= 30 and first != second
    assert posted[0]["read"] != posted[1]["read"] and 0 < posted[1]["read"] <= 30


def test_item_3_core_openai_direct_post_failure_is_the_sdks_error() -> None:
    """A refused connection is the SDK's ``APIConnectionError`` under llmplex's error, as before."""
    with StreamServer() as server:
        url = server.url
    llm = llmplex.Client(
        providers={"p": {"plugin": "openai", "base_url": f"{url}/v1", "api": "chat", "api_key": "sk-x"}},
        throttle={"max_attempts": 1},
    )

    async def call() -> None:
        try:
            await llm.acomplete("p:m", "hi")
        finally:
            await llm.aclose()

    with pytest.raises(llmplex.LLMError) as failed:
        asyncio.run(call())
    assert isinstance(failed.value.__cause__, openai.APIConnectionError)


def test_item_3_core_openai_async_sends_are_no_coroutines_of_their_own() -> None:
    """``asend_chat`` and ``asend_responses`` hand on what to await (``apost``, ``astream`` or the SDK's call):
    one coroutine frame fewer on every resumption of an async call."""
    import inspect

    from llmplex_openai import transport

    assert not inspect.iscoroutinefunction(transport.asend_chat)
    assert not inspect.iscoroutinefunction(transport.asend_responses)
