"""Issue 34 item 3: what ``DirectSender`` does on every direct post, made cheaper. The ``Reply`` of a 2xx answer is
a slotted dataclass that is not frozen (a frozen one's ``__init__`` sets each field through
``object.__setattr__``: five times the cost); whether the client holds cookies is read from its cookie jar's own
dict; timeouts capped at a deadline's time left are the call's own ``ClientTimeout``, not kept (they only pushed
the client's repeated ones out of the cache)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from http.cookiejar import Cookie, CookieJar
from typing import Any

import openai
import pytest

import llmplex
from llmplex import Deadline
from llmplex.http import direct_sender, sdk_async_client
from llmplex.http.direct import DirectSender, Reply
from tests.support.stream_server import Reply as Scripted
from tests.support.stream_server import StreamServer

KEY = "sk-direct-slots-0a1b2c3d4e5f6071"
ANSWER = {
    "id": "chatcmpl-slots",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}


@pytest.fixture(scope="module")
def server() -> Iterator[StreamServer]:
    with StreamServer() as server:
        yield server


def _llm(server: StreamServer) -> llmplex.Client:
    table = {"plugin": "openai", "base_url": f"{server.url}/v1", "api": "chat", "api_key": KEY}
    return llmplex.Client(providers={"p": table}, throttle={"max_attempts": 1}, disabled=["recorder", "exitobserver"])


def test_item_3_core_a_reply_is_slotted_and_not_frozen() -> None:
    params = Reply.__dataclass_params__  # type: ignore[attr-defined]
    assert not params.frozen and "__slots__" in Reply.__dict__
    reply = Reply(200, {"a": "b"}, b"{}", "application/json", lambda: "built")
    assert dataclasses.astuple(reply)[:4] == (200, {"a": "b"}, b"{}", "application/json")
    assert reply.response() == "built"


def _refused(*args: Any, **kwargs: Any) -> None:
    raise AssertionError("asked through __bool__")


@pytest.mark.parametrize("deadline", [None, 30.0])
def test_item_3_core_a_direct_answer_is_the_reply_of_the_post(
    server: StreamServer, deadline: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    posts: list[Any] = []
    post = DirectSender.post

    async def spy(self: DirectSender, *args: Any, **kwargs: Any) -> Any:
        answer = await post(self, *args, **kwargs)
        posts.append(answer)
        return answer

    monkeypatch.setattr(DirectSender, "post", spy)
    server.script(Scripted.json(200, json.dumps(ANSWER).encode()))
    llm = _llm(server)
    at = None if deadline is None else Deadline.after(deadline)
    response = asyncio.run(llm.acomplete("p:m", "hi", deadline=at))
    (reply,) = posts
    assert type(reply) is Reply and reply.status == 200 and json.loads(reply.content) == ANSWER
    assert reply.content_type.startswith("application/json") and reply.response().json() == ANSWER
    assert (response.text, response.usage.total_tokens, response.raw) == ("Hello", 4, ANSWER)


def _cookie(name: str) -> Cookie:
    return Cookie(0, name, "1", None, False, "example.com", True, False, "/", True, False, None, False, None, None, {})


def test_item_3_core_cookies_are_read_from_the_jar(monkeypatch: pytest.MonkeyPatch) -> None:
    async def run() -> list[bool]:
        http = sdk_async_client(openai)
        try:
            monkeypatch.setattr(type(http.cookies), "__bool__", _refused)
            seen = [direct_sender(http) is not None]
            http.cookies.jar.set_cookie(_cookie("seen"))
            seen.append(direct_sender(http) is not None)
            http.cookies.jar.clear("example.com", "/", "seen")  # an emptied domain left in the jar's dict
            seen.append(direct_sender(http) is not None)
            http.cookies.jar.clear()
            seen.append(direct_sender(http) is not None)
            return seen
        finally:
            monkeypatch.undo()
            await http.aclose()

    assert asyncio.run(run()) == [True, False, False, True]


class _Jar(CookieJar):
    """A jar with no dict of its own to read."""

    def __init__(self, held: bool) -> None:
        super().__init__()
        self.held = held
        del self._cookies

    def __iter__(self) -> Iterator[Cookie]:
        return iter([_cookie("own")] if self.held else [])


@pytest.mark.parametrize("held", [False, True])
def test_item_3_core_another_jar_is_asked_as_before(held: bool) -> None:
    async def run() -> bool:
        http = sdk_async_client(openai)
        try:
            http.cookies.jar = _Jar(held)
            return direct_sender(http) is not None
        finally:
            await http.aclose()

    assert asyncio.run(run()) is not held


def test_item_3_core_capped_timeouts_are_the_calls_own(server: StreamServer, monkeypatch: pytest.MonkeyPatch) -> None:
    kept: list[Any] = []
    client_timeout = DirectSender._client_timeout

    def counted(self: DirectSender, *args: Any) -> Any:
        kept.append(args)
        return client_timeout(self, *args)

    monkeypatch.setattr(DirectSender, "_client_timeout", counted)
    llm = _llm(server)

    async def calls() -> None:
        for deadline in (None, 30.0, 20.0):
            server.script(Scripted.json(200, json.dumps(ANSWER).encode()))
            at = None if deadline is None else Deadline.after(deadline)
            assert (await llm.acomplete("p:m", "hi", deadline=at)).text == "Hello"

    asyncio.run(calls())
    assert len(kept) == 1  # only the call without a deadline asks for the client's own
