"""Issue 34 item 3: an Azure whole answer, async, is posted straight on the aiohttp session, and its key never
follows a redirect to another origin.

openai 3.x's Azure client adds a request hook of its own (``api-key`` stripped from a request redirected to
another origin), which kept its requests on httpx. llmplex-azure's async client carries its reproduction,
``strip_key_on_redirect``, vouched for with ``llmplex.http.direct.vouch_for_redirect_hooks``: it changes nothing
on the request posted, and httpx runs it on every redirect it follows.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from llmplex_azure.clients import strip_key_on_redirect

import llmplex
from llmplex.http.direct import DirectSender
from tests.contract import fixtures_openai as fx
from tests.providers_next.test_item_3_azure_openai import _clean_environment
from tests.support.openai_wire import CHAT_PATH, success_body
from tests.support.stream_server import Reply, StreamServer

KEY = "azkey-item3-0123456789abcdef"
PATH = "/openai/deployments/m/chat/completions?api-version=2024-10-21"
__all__ = ["_clean_environment"]  # autouse: no Azure variable of the environment reaches these clients

ANSWER = success_body(CHAT_PATH, {"model": "m"}, "Hello from the other side", fx.TokenUsage())


@pytest.fixture
def posts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs posted straight on the aiohttp session."""
    seen: list[str] = []
    post = DirectSender.post

    async def spy(self: DirectSender, *args: Any, **kwargs: Any) -> Any:
        seen.append(args[0])
        return await post(self, *args, **kwargs)

    monkeypatch.setattr(DirectSender, "post", spy)
    return seen


def _ask(endpoint: str) -> llmplex.Response:
    llm = llmplex.Client(providers={"p": {"plugin": "azure", "endpoint": endpoint, "api_key": KEY}})

    async def call() -> llmplex.Response:
        try:
            return await llm.acomplete("p:m", "hi", throttle={"max_attempts": 1})
        finally:
            await llm.aclose()

    return asyncio.run(call())


def _key(server: StreamServer) -> list[str | None]:
    return [dict(request.headers).get("api-key") for request in server.requests]


def _redirect(to: str) -> Reply:
    return Reply(307, (b"",), "text/plain", (("Location", to),))


def test_item_3_azure_async_posts_directly_and_drops_its_key_on_a_redirect_elsewhere(posts: list[str]) -> None:
    with StreamServer() as there, StreamServer() as here:
        there.script(Reply.json(200, ANSWER))
        here.script(_redirect(there.url + PATH))
        response = _ask(here.url)
    assert response.text == "Hello from the other side"
    assert posts == [here.url + PATH]
    assert _key(here) == [KEY]
    assert _key(there) == [None]
    assert json.loads(there.requests[0].body) == json.loads(here.requests[0].body)


def test_item_3_azure_async_keeps_its_key_on_a_redirect_to_its_own_origin(posts: list[str]) -> None:
    with StreamServer() as here:
        here.script(_redirect(here.url + PATH + "&moved=1"), Reply.json(200, ANSWER))
        response = _ask(here.url)
    assert response.text == "Hello from the other side"
    assert len(posts) == 1
    assert _key(here) == [KEY, KEY]


def test_item_3_azure_async_client_hooks_are_the_deadline_and_the_key_strip() -> None:
    llm = llmplex.Client(providers={"p": {"plugin": "azure", "endpoint": "http://127.0.0.1:9", "api_key": KEY}})
    instance = llm.route("p:m").provider

    async def hooks() -> list[Any]:
        client = instance.client(asynchronous=True)
        return list(client._client.event_hooks["request"])

    found = asyncio.run(hooks())
    assert len(found) == 2
    assert found[-1] is strip_key_on_redirect
    assert all(getattr(hook, "__module__", None) != "openai.lib.azure" for hook in found)
