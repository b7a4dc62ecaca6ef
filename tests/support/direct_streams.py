"""Running a lean async stream both ways, straight on aiohttp (``llmplex.http.direct_stream``) and through httpx
(``DirectSender.usable`` forced false): what the direct-stream tests of llmplex-openai and llmplex-anthropic share.
``module`` is the plugin's lean module, whose ``open_stream`` a spy watches to say which way a stream went."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

import llmplex
from llmplex import Deadline, LLMDeadlineExceededError
from llmplex.http.direct import DirectSender
from tests.support.fault_server import Fault
from tests.support.late import Late
from tests.support.socket_server import SocketServer
from tests.support.stream_server import Reply, StreamServer

__all__ = [
    "DEADLINE_FAULTS",
    "OVERRUN",
    "WAYS",
    "both",
    "cancelled_mid_read",
    "connections",
    "first_before_second",
    "many_in_flight",
    "past_the_deadline",
    "stopped_early",
    "timings_hidden",
    "way",
]

LlmAt = Callable[[str], llmplex.Client]
"""The client whose provider ``p`` sends to a local server's root."""
_STREAM_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"

WAYS = ("direct", "httpx")
T, OVERRUN = 0.6, 0.05
"""The deadline of the deadline tests, and the slack past it on a loaded 2-core machine."""

DEADLINE_FAULTS: dict[str, Callable[[], Fault]] = {
    "trickle": lambda: Fault.trickle(0.05),
    "trickled headers": lambda: Fault.trickle_headers(0.1),
    "stall after two events": lambda: Fault.stream_stall(after_events=2, seconds=30),
    "silence": lambda: Fault.hang(30),
}
"""Upstreams that never finish in time: a stream read from one ends at its deadline."""


@contextlib.contextmanager
def way(monkeypatch: pytest.MonkeyPatch, module: ModuleType, chosen: str) -> Iterator[list[object]]:
    """Stream the ``chosen`` way; the list fills with one entry per stream opened directly."""
    opened: list[object] = []
    open_stream = module.open_stream

    async def spy(*args: Any, **kwargs: Any) -> Any:
        opened.append(args[1])
        return await open_stream(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(module, "open_stream", spy)
        if chosen == "httpx":
            patch.setattr(DirectSender, "usable", lambda self: False)
        yield opened


def both(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, run: Callable[[], tuple[object, ...]]
) -> list[tuple[object, ...]]:
    """``run()``'s outcome streamed directly, then through httpx (each checked to have gone that way)."""
    outcomes = []
    for chosen in WAYS:
        with way(monkeypatch, module, chosen) as opened:
            outcomes.append(run())
        assert bool(opened) is (chosen == "direct"), chosen
    return outcomes


def timings_hidden(headers: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """``headers`` with the timeouts they announce (which count down) hidden."""
    return tuple((name, "T" if "timeout" in name else value) for name, value in headers)


def past_the_deadline(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, llm: llmplex.Client
) -> tuple[bool, float, Late]:
    """Read ``llm``'s stream of ``p:m`` directly under a deadline of ``T`` that it must end at: whether it went
    directly, how late past the deadline it ended (seconds), and the ``Late`` that measured it."""
    llm.provider_client("p")
    deadline = Deadline.after(T)
    late = Late(deadline)

    async def read() -> None:
        late.on_loop()
        async for _ in llm.astream("p:m", "hi", deadline=deadline):
            pass

    with way(monkeypatch, module, "direct") as opened, pytest.raises(LLMDeadlineExceededError):
        asyncio.run(read())
    return bool(opened), late.seconds(), late


def connections(llm: llmplex.Client) -> tuple[int, int]:
    """The connections of ``llm``'s one route's async SDK client: acquired, pooled."""
    (route,) = llm.router.instances()
    connector: Any = route.clients.get(asynchronous=True)._client._transport.client.connector
    return len(connector._acquired), sum(len(c) for c in connector._conns.values())


def cancelled_mid_read(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, llm_at: LlmAt, sent: bytes
) -> tuple[bool, tuple[int, int, set[asyncio.Task[Any]]], bool]:
    """A direct stream whose upstream sent ``sent`` (up to a first text) and then waits, cancelled while it waits
    for more: whether it went directly; the connections acquired and pooled and the tasks left after it; whether
    the server saw the connection closed."""
    closed = threading.Event()

    def answer(connection: socket.socket, stopping: threading.Event) -> None:
        connection.recv(65536)
        connection.sendall(_STREAM_HEAD + b"\r\n" + sent)
        connection.settimeout(30)
        if connection.recv(1) == b"":  # the client closed the connection
            closed.set()

    async def cancel(llm: llmplex.Client) -> tuple[int, int, set[asyncio.Task[Any]]]:
        first = asyncio.Event()

        async def read() -> None:
            async for event in llm.astream("p:m", "hi"):
                if event.type == "text":
                    first.set()

        task = asyncio.create_task(read())
        await first.wait()
        await asyncio.sleep(0.05)  # the reader waits for more bytes
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        acquired, pooled = connections(llm)
        left = {t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()}
        await llm.aclose()
        return acquired, pooled, left

    with SocketServer(answer) as server, way(monkeypatch, module, "direct") as opened:
        outcome = asyncio.run(cancel(llm_at(server.root)))
        seen_closed = closed.wait(10)
    return bool(opened), outcome, seen_closed


def stopped_early(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, llm_at: LlmAt, body: bytes
) -> tuple[bool, tuple[int, int]]:
    """A direct stream of the unfinished chunked ``body`` whose consumer stops after the first text (``aclose``):
    whether it went directly, and the connections acquired and pooled once the server saw it closed."""
    closed = threading.Event()

    def answer(connection: socket.socket, stopping: threading.Event) -> None:
        connection.recv(65536)
        head = _STREAM_HEAD + b"transfer-encoding: chunked\r\n\r\n"
        connection.sendall(head + b"%x\r\n%s\r\n" % (len(body), body))
        connection.settimeout(30)
        if connection.recv(1) == b"":
            closed.set()

    async def early(llm: llmplex.Client) -> tuple[int, int]:
        stream = llm.astream("p:m", "hi")
        async for event in stream:
            if event.type == "text":
                break
        await stream.aclose()
        assert await asyncio.to_thread(closed.wait, 10)  # the server saw the connection closed
        seen = connections(llm)
        await llm.aclose()
        return seen

    with SocketServer(answer) as server, way(monkeypatch, module, "direct") as opened:
        outcome = asyncio.run(early(llm_at(server.root)))
    return bool(opened), outcome


def first_before_second(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, llm_at: LlmAt, first: bytes, rest: bytes
) -> tuple[bool, list[str], list[bool]]:
    """An upstream that sends ``first`` and waits for the caller to have its text before it sends ``rest``:
    whether the stream went directly, its texts, and whether the upstream saw the first text had (a reader that
    waited for more bytes would make it wait out its bound)."""
    seen_first = threading.Event()
    waited: list[bool] = []

    def answer(connection: socket.socket, stopping: threading.Event) -> None:
        connection.recv(65536)
        connection.sendall(_STREAM_HEAD + b"connection: close\r\n\r\n")
        connection.sendall(first)
        waited.append(seen_first.wait(30))
        connection.sendall(rest)

    async def read(llm: llmplex.Client) -> list[str]:
        texts = []
        async for event in llm.astream("p:m", "hi"):
            if event.type == "text":
                texts.append(event.text or "")
                seen_first.set()
        await llm.aclose()
        return texts

    with SocketServer(answer) as server, way(monkeypatch, module, "direct") as opened:
        texts = asyncio.run(read(llm_at(server.root)))
    return bool(opened), texts, waited


def many_in_flight(
    monkeypatch: pytest.MonkeyPatch, module: ModuleType, llm_at: LlmAt, body: bytes, count: int = 64
) -> tuple[int, list[str]]:
    """``count`` direct streams of ``body`` in flight at once: how many went directly, and each one's text."""

    async def many(llm: llmplex.Client) -> list[str]:
        async def one() -> str:
            return "".join([e.text or "" async for e in llm.astream("p:m", "hi") if e.type == "text"])

        texts = await asyncio.gather(*(one() for _ in range(count)))
        await llm.aclose()
        return texts

    with StreamServer() as server, way(monkeypatch, module, "direct") as opened:
        server.script(*[Reply.events(body)] * count)
        texts = asyncio.run(many(llm_at(server.url)))
    return len(opened), texts
