"""Issue 12 item 1: a call with ``timeout=T`` ends within T + 50 ms while the server trickles its answer.

Every plugin that does HTTP (openai, anthropic, gemini, litellm, llamacpp, the docs' echo example), sync and
async, streaming and not, against a local server that sends the response body (or even its status line and
headers) one byte every 0.3 s: each read returns well within any read timeout, so only a bound on the whole
response ends the call. Before the fix a sync ``complete`` read such a body to its end (157 s for a real one).

Each call is warmed up first (plugin and SDK imported, clients built): this module is about I/O; item 2's
test is about the clock starting before imports. Bounds are strict (T + 50 ms); on a loaded 2-core machine the
measured overrun is 0.5-10 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Generator, Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

import llmplex
from llmplex import Deadline, LLMDeadlineExceededError, LLMError, hookimpl
from llmplex.http import async_client, honour_deadline, sync_client
from llmplex.reliability.deadline import deadline_scope
from tests.support.fault_server import Fault, FaultServer
from tests.support.late import Late

T = 0.6
OVERRUN = 0.05
KEY = "sk-trickle-test-key-0123456789"
MODES = ["complete", "acomplete", "stream", "astream"]


def _openai(server: FaultServer) -> tuple[llmplex.Client, str]:
    instance = {"plugin": "openai", "base_url": server.url, "api": "chat", "api_key": KEY}
    return llmplex.Client(providers={"p": instance}), "p:gpt-4o-mini"


def _anthropic(server: FaultServer) -> tuple[llmplex.Client, str]:
    instance = {"plugin": "anthropic", "base_url": server.url.removesuffix("/v1"), "api_key": KEY}
    return llmplex.Client(providers={"p": instance}), "p:claude-sonnet-4-5"


def _gemini(server: FaultServer) -> tuple[llmplex.Client, str]:
    instance = {"plugin": "gemini", "base_url": server.url.removesuffix("/v1"), "api_key": KEY}
    return llmplex.Client(providers={"p": instance}), "p:gemini-2.5-flash"


def _litellm(server: FaultServer) -> tuple[llmplex.Client, str]:
    return llmplex.Client(providers={"litellm": {"api_base": server.url, "api_key": KEY}}), "litellm:openai/gemma"


def _llamacpp(server: FaultServer) -> tuple[llmplex.Client, str]:
    return llmplex.Client(), "llamacpp:gemma3"  # its model server is replaced by the fault server


def _echo(server: FaultServer) -> tuple[llmplex.Client, str]:
    return llmplex.Client(providers={"echo": {"base_url": server.url.removesuffix("/v1")}}), "echo:echo-1"


PLUGINS: dict[str, Callable[[FaultServer], tuple[llmplex.Client, str]]] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "litellm": _litellm,
    "llamacpp": _llamacpp,
    "echo": _echo,
}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultServer]:
    """A fault server answering on every provider's path; llamacpp's model server is this one."""
    from llmplex_llamacpp.server import LocalServer

    with FaultServer(any_path=True) as fake:
        monkeypatch.setattr(LocalServer, "for_model", lambda model, **_: SimpleNamespace(openai_base_url=fake.url))
        yield fake


def _run(client: llmplex.Client, model: str, mode: str, late: Late | None = None, **kwargs: Any) -> object:
    kwargs.setdefault("throttle", {"max_attempts": 1})
    if late is not None:
        kwargs["deadline"] = late.deadline
    if mode == "complete":
        return client.complete(model, "hi", **kwargs)
    if mode == "stream":
        return list(client.stream(model, "hi", **kwargs))

    async def call() -> object:
        if late is not None:
            late.on_loop()
        if mode == "acomplete":
            return await client.acomplete(model, "hi", **kwargs)
        return [event async for event in client.astream(model, "hi", **kwargs)]

    return asyncio.run(call())


def _warm_up(client: llmplex.Client, model: str, mode: str) -> None:
    """One call answered at once (the server speaks OpenAI's format: other providers fail to parse it)."""
    with contextlib.suppress(LLMError):
        _run(client, model, mode)


def _assert_ends_at(late: Late, run: Callable[[], object]) -> None:
    """``run()`` raises the deadline error within ``OVERRUN`` of the deadline, on llmplex's own account
    (``tests.support.late``: the time a busy machine keeps the caller waiting for a CPU is not counted)."""
    with pytest.raises(LLMDeadlineExceededError):
        run()
    seconds = late.seconds()
    assert seconds < OVERRUN, late.describe(seconds)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("plugin", PLUGINS)
def test_item_01_a_trickling_body_ends_the_call_at_its_deadline(plugin: str, mode: str, server: FaultServer) -> None:
    client, model = PLUGINS[plugin](server)
    _warm_up(client, model, mode)
    server.enqueue(Fault.trickle(0.3))
    late = Late.after(T)
    _assert_ends_at(late, lambda: _run(client, model, mode, late))


@pytest.mark.parametrize("mode", ["complete", "stream", "astream"])
@pytest.mark.parametrize("plugin", PLUGINS)
def test_item_01_trickling_headers_end_the_call_at_its_deadline(plugin: str, mode: str, server: FaultServer) -> None:
    client, model = PLUGINS[plugin](server)
    _warm_up(client, model, mode)
    server.enqueue(Fault.trickle_headers(0.3))
    late = Late.after(T)
    _assert_ends_at(late, lambda: _run(client, model, mode, late))


class _IgnoresItsTimeout:
    """A pipeline wrapper standing for a plugin bug: its sync send blocks for good, whatever the timeout."""

    def __init__(self) -> None:
        self.release = threading.Event()

    @hookimpl(wrapper=True)
    def llmplex_call(self) -> Generator[None, Any, Any]:
        self.release.wait(30)
        return (yield)


def test_item_01_core_bounds_a_plugin_that_ignores_its_timeout() -> None:
    stuck = _IgnoresItsTimeout()
    client = llmplex.Client(plugins=[stuck])
    try:
        deadline = Deadline.after(0.3)
        _assert_ends_at(Late(deadline), lambda: client.complete("mock:m", "x", deadline=deadline))
    finally:
        stuck.release.set()


# -- the core HTTP helper itself -----------------------------------------------------------------


def _trickling_server() -> FaultServer:
    return FaultServer(default=Fault.trickle(0.3), any_path=True)


def test_item_01_an_honouring_client_reads_no_body_past_the_deadline() -> None:
    with _trickling_server() as server, sync_client() as http:
        deadline = Deadline.after(T)
        late = Late(deadline)
        with deadline_scope(deadline), pytest.raises(httpx.ReadTimeout, match="deadline"):
            http.post(server.url + "/chat/completions", json={})
        seconds = late.seconds()
        assert seconds < OVERRUN, late.describe(seconds)


def test_item_01_an_honouring_async_client_reads_no_body_past_the_deadline() -> None:
    async def post(url: str) -> None:
        late.on_loop()
        async with async_client() as http:
            with deadline_scope(deadline), pytest.raises(httpx.ReadTimeout, match="deadline"):
                await http.post(url, json={})

    with _trickling_server() as server:
        deadline = Deadline.after(T)
        late = Late(deadline)
        asyncio.run(post(server.url + "/chat/completions"))
        seconds = late.seconds()
        assert seconds < OVERRUN, late.describe(seconds)


def test_item_01_honouring_a_deadline_changes_nothing_outside_a_call_and_is_added_once() -> None:
    with FaultServer() as server:
        http = honour_deadline(honour_deadline(httpx.Client()))
        assert len(http.event_hooks["request"]) == len(http.event_hooks["response"]) == 1
        with http:
            answer = http.post(server.url + "/chat/completions", json={"model": "m", "messages": []})
        assert answer.status_code == 200 and answer.json()["object"] == "chat.completion"


def test_item_01_honour_deadline_rejects_what_is_not_an_httpx_client() -> None:
    with pytest.raises(llmplex.LLMConfigurationError, match="httpx or httpx2 Client"):
        honour_deadline(object())
