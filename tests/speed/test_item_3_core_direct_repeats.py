"""Issue 34 item 3: ``llmplex.http.direct``'s sender tells a client's repeated post by identity: the timeouts dict
and header tuple a lean path hands on every call (llmplex-openai's wire, llmplex-anthropic's plan, llmplex-gemini's
endpoint, all kept as the same objects) are worked out to aiohttp's once, without building and hashing a key each
call; anything else (a list of headers, another host, other timeouts) is worked out as before."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest

import llmplex
from llmplex.http import direct
from llmplex.http.direct import DirectSender, direct_sender
from tests.contract import fixtures_openai as fx
from tests.support.openai_wire import CHAT_PATH, success_body
from tests.support.stream_server import Reply, StreamServer

_ANSWER = success_body(CHAT_PATH, {"model": "m"}, "Hello!", fx.TokenUsage())


def _counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"timeouts": 0, "headers": 0}
    client_timeout, merged = DirectSender._client_timeout, direct._merged

    def timeouts(self: DirectSender, *args: Any) -> Any:
        counts["timeouts"] += 1
        return client_timeout(self, *args)

    def headers(*args: Any) -> Any:
        counts["headers"] += 1
        return merged(*args)

    monkeypatch.setattr(DirectSender, "_client_timeout", timeouts)
    monkeypatch.setattr(direct, "_merged", headers)
    return counts


def test_item_3_core_direct_repeat_worked_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = _counted(monkeypatch)
    with StreamServer() as server:
        server.script(*[Reply.json(200, _ANSWER)] * 3)
        llm = llmplex.Client(
            providers={"p": {"plugin": "openai", "base_url": f"{server.url}/v1", "api": "chat", "api_key": "sk-x"}},
            throttle={"max_attempts": 1},
        )

        async def calls() -> list[llmplex.Response]:
            try:
                return [await llm.acomplete("p:m", "hi") for _ in range(3)]
            finally:
                await llm.aclose()

        answers = asyncio.run(calls())
        sent = [request.headers for request in server.requests]
    assert [answer.text for answer in answers] == ["Hello!"] * 3
    assert counts == {"timeouts": 1, "headers": 1}
    assert sent[0] == sent[1] == sent[2]


def _sender() -> Any:
    """A direct sender of an SDK client on its aiohttp transport (the openai plugin's async client)."""
    llm = llmplex.Client(providers={"p": {"plugin": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key": "k"}})
    instance = llm.router.instance("p")
    http = instance.clients.get(asynchronous=True)._client
    sender = direct_sender(http)
    assert sender is not None
    return llm, sender


def test_item_3_core_direct_other_hosts_and_changed_lists_are_worked_out_again() -> None:
    """The same header tuple to another host gets that host; a list of headers changed between posts sends what
    it holds now; a new timeouts dict is read again."""

    async def posts(first: str, second: str) -> None:
        llm, sender = _sender()
        try:
            fixed = ((b"x-fixed", b"1"),)
            changing = [(b"x-changing", b"1")]
            for url in (first, second, first):
                await sender.post(url, fixed, b"{}", {"connect": 5.0, "read": 5.0, "pool": 5.0}, _request(url))
            await sender.post(first, changing, b"{}", {"connect": 5.0, "read": 5.0, "pool": 5.0}, _request(first))
            changing[0] = (b"x-changing", b"2")
            await sender.post(first, changing, b"{}", {"connect": 5.0, "read": 5.0, "pool": 5.0}, _request(first))
        finally:
            await llm.aclose()

    with StreamServer() as one, StreamServer() as two:
        one.script(*[Reply.json(200, b"{}")] * 4)
        two.script(Reply.json(200, b"{}"))
        asyncio.run(posts(one.url + CHAT_PATH, two.url + CHAT_PATH))
        hosts_one = [dict(request.headers)["host"] for request in one.requests]
        hosts_two = [dict(request.headers)["host"] for request in two.requests]
        changing = [dict(request.headers).get("x-changing") for request in one.requests]
    assert hosts_one == [one.url.removeprefix("http://")] * 4
    assert hosts_two == [two.url.removeprefix("http://")]
    assert changing == [None, None, "1", "2"]


def _request(url: str) -> Any:
    return lambda: httpx2.Request("POST", url, content=b"{}")
