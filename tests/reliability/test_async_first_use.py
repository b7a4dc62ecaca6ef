"""An async call's first use loads what it needs (the default client, observers, the provider plugin and its SDK)
on a worker thread: the caller's event loop runs on meanwhile, and the call's deadline still bounds the loading.

Each test makes the loading wait for an event that only a task on the caller's loop sets: loaded on the loop's
thread, the wait would hold the loop and time out (``_HELD``), and the test fails saying so.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import llmplex
from llmplex import process_client
from llmplex.engine.fallback import Call
from llmplex.errors import LLMConfigurationError, LLMDeadlineExceededError
from llmplex.plugins.host import PluginHost
from llmplex.types import StreamEvent

_HELD = 10.0
"""Seconds a loading waits for the loop's task before it gives up (the loop was held)."""


class Gate:
    """A loading step that waits for ``opened`` (set by a task on the caller's loop); notes the thread it ran on."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.threads: list[int] = []
        self.held = False

    def wait(self) -> None:
        self.threads.append(threading.get_ident())
        if not self.opened.wait(_HELD):
            self.held = True

    async def open_from_the_loop(self) -> None:
        while not self.threads:  # noqa: ASYNC110 - the loading starts on another thread (or blocks this one)
            await asyncio.sleep(0.001)
        self.opened.set()

    def check(self, loop_thread: int) -> None:
        assert not self.held, f"the loading held the event loop (no task ran for {_HELD} s)"
        assert self.threads and loop_thread not in self.threads, "the loading ran on the loop's thread"


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    """Loading the observers of a client (a first use's first step) waits at the gate."""
    gate = Gate()
    load = PluginHost.load_observers

    def gated(host: PluginHost, disabled: Any = ()) -> None:
        if not host.observers_loaded:
            gate.wait()
        load(host, disabled)

    monkeypatch.setattr(PluginHost, "load_observers", gated)
    yield gate
    gate.opened.set()


def _beside_the_loop(gate: Gate, call: Callable[[], Any]) -> Any:
    async def main() -> Any:
        opener = asyncio.create_task(gate.open_from_the_loop())
        result = await call()
        await opener
        gate.check(threading.get_ident())
        return result

    return asyncio.run(main())


async def _texts(stream: Any) -> str:
    return "".join([event.text async for event in stream if event.type == "text"])


def test_the_first_acomplete_of_a_model_loads_off_the_loop(gate: Gate) -> None:
    with llmplex.Client() as client:
        answer = _beside_the_loop(gate, lambda: client.acomplete("mock:echo", "first"))
    assert answer.text == "first"


def test_the_first_astream_of_a_model_loads_off_the_loop(gate: Gate) -> None:
    with llmplex.Client() as client:
        text = _beside_the_loop(gate, lambda: _texts(client.astream("mock:echo", "one two three")))
    assert text.split() == ["one", "two", "three"]


def test_the_first_conversation_loads_off_the_loop(gate: Gate) -> None:
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    with llmplex.Client() as client:
        answer = _beside_the_loop(gate, lambda: client.acomplete("mock:echo", "hi", tools=[add]))
    assert answer.text


@pytest.fixture
def default_gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    """Building the default client waits at the gate (none is built yet)."""
    gate = Gate()
    build = process_client.shared

    def gated() -> llmplex.Client:
        gate.wait()
        return build()

    monkeypatch.setattr(process_client, "shared", gated)
    assert process_client.current() is None
    yield gate
    gate.opened.set()


def test_the_default_client_is_built_off_the_loop(default_gate: Gate) -> None:
    answer = _beside_the_loop(default_gate, lambda: llmplex.acomplete("mock:echo", "top level"))
    assert answer.text == "top level"


def test_the_default_client_of_a_first_astream_is_built_off_the_loop(default_gate: Gate) -> None:
    text = _beside_the_loop(default_gate, lambda: _texts(llmplex.astream("mock:echo", "top level stream")))
    assert text.split() == ["top", "level", "stream"]


def test_a_first_use_that_outlives_its_deadline_is_a_typed_error_and_the_next_call_loads_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    released = threading.Event()
    load = PluginHost.load_observers

    def stuck(host: PluginHost, disabled: Any = ()) -> None:
        released.wait(_HELD)  # an SDK import that takes longer than the call may
        load(host, disabled)

    monkeypatch.setattr(PluginHost, "load_observers", stuck)
    with llmplex.Client() as client:

        async def late() -> None:
            with pytest.raises(LLMDeadlineExceededError, match="while loading the provider plugin for 'mock:echo'"):
                await client.acomplete("mock:echo", "late", timeout=0.2)
            with pytest.raises(LLMDeadlineExceededError, match="while loading the provider plugin"):
                await _texts(client.astream("mock:echo", "late", timeout=0.2))

        try:
            asyncio.run(late())
        finally:
            released.set()
        assert asyncio.run(client.acomplete("mock:echo", "in time", timeout=30)).text == "in time"


def test_a_model_used_before_starts_on_the_loop_with_nothing_handed_to_a_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with llmplex.Client() as client:
        assert asyncio.run(client.acomplete("mock:echo", "first")).text == "first"
        loads: list[Any] = []
        monkeypatch.setattr(llmplex.Client, "_aload", lambda *args: loads.append(args))
        assert asyncio.run(client.acomplete("mock:echo", "again")).text == "again"
        assert asyncio.run(_texts(client.astream("mock:echo", "and again"))).split() == ["and", "again"]
    assert loads == []


def test_an_abandoned_first_astream_closes_the_calls_stream_before_aclose_returns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    closed: list[str] = []
    original = Call.astream

    def watched(call: Call) -> AsyncIterator[StreamEvent]:
        inner: Any = original(call)

        async def events() -> AsyncIterator[StreamEvent]:
            try:
                async for event in inner:
                    yield event
            finally:
                closed.append("closed")
                await inner.aclose()

        return events()

    monkeypatch.setattr(Call, "astream", watched)
    with llmplex.Client() as client:

        async def main() -> list[str]:
            stream: Any = client.astream("mock:echo", "one two three four")
            async for event in stream:
                if event.type == "text":
                    break
            await stream.aclose()
            return list(closed)  # before the loop's finalizers could close anything

        assert asyncio.run(main()) == ["closed"]


def test_bad_arguments_of_a_first_use_are_typed_errors_before_anything_loads(gate: Gate) -> None:
    with llmplex.Client() as client:

        async def main() -> None:
            with pytest.raises(LLMConfigurationError, match="timeout must be a positive number"):
                await client.acomplete("mock:echo", "x", timeout=-1)
            with pytest.raises(LLMConfigurationError, match=r"deadline must be an llmplex\.Deadline"):
                client.astream("mock:echo", "x", deadline=5)  # type: ignore[arg-type]

        asyncio.run(main())
    assert gate.threads == []


def test_a_model_the_router_does_not_keep_is_loaded_once_a_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the router's cache of routes a model is never "used before": each async call loads once, then is
    answered (the loading does not hand the call back to the first-use path, which would load again forever)."""
    monkeypatch.setattr("llmplex.routing.router.MAX_CACHED_ROUTES", 0)
    loads: list[str | None] = []
    load = llmplex.Client._load

    def counted(client: llmplex.Client, model: str | None) -> None:
        loads.append(model)
        load(client, model)

    monkeypatch.setattr(llmplex.Client, "_load", counted)
    with llmplex.Client() as client:

        async def main() -> list[str]:
            answers = [(await client.acomplete("mock:echo", f"call {i}")).text for i in range(3)]
            answers.append(await _texts(client.astream("mock:echo", "a stream")))
            return answers

        assert asyncio.run(asyncio.wait_for(main(), 60)) == ["call 0", "call 1", "call 2", "a stream"]  # not forever
    assert loads == ["mock:echo"] * 4
