"""Running a lean async stream both ways, straight on aiohttp (``llmplex.http.direct_stream``) and through httpx
(``DirectSender.usable`` forced false): what the direct-stream tests of llmplex-openai and llmplex-anthropic share.
``module`` is the plugin's lean module, whose ``open_stream`` a spy watches to say which way a stream went."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

import llmplex
from llmplex import Deadline, LLMDeadlineExceededError
from llmplex.http.direct import DirectSender
from tests.support.fault_server import Fault
from tests.support.late import Late

__all__ = ["DEADLINE_FAULTS", "OVERRUN", "WAYS", "both", "connections", "past_the_deadline", "timings_hidden", "way"]

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
