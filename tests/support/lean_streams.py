"""Reading a stream both ways (the SDK's path and the lean one) and comparing how it ends: what the lean-stream
tests of llmplex-openai, llmplex-anthropic and the openai-compatible presets share."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import llmplex
from llmplex import Deadline, LLMError
from tests.support.fault_server import Fault

__all__ = ["STREAM_FAULTS", "count_reads", "drain", "events", "outcome"]

STREAM_FAULTS: dict[str, Callable[[], Fault]] = {
    "stream cut after 2 events": lambda: Fault.stream_cut(after_events=2),
    "connection reset": Fault.reset,
    "rate limit": lambda: Fault.rate_limit(retry_after=2),
    "malformed event": Fault.malformed_json,
}
"""Faults of an OpenAI-shaped stream (``FaultServer``), each failing with one typed error."""


def count_reads(monkeypatch: pytest.MonkeyPatch, module: Any, reads: list[str]) -> None:
    """Each ``iter_sse``/``aiter_sse`` read of ``module`` (a lean path) is appended to ``reads`` (cleared first)."""
    reads.clear()
    for name in ("iter_sse", "aiter_sse"):
        original = getattr(module, name)

        def counted(source: Any, _name: str = name, _original: Any = original) -> Any:
            reads.append(_name)
            return _original(source)

        monkeypatch.setattr(module, name, counted)


def events(client: llmplex.Client, mode: str, model: str, **kwargs: Any) -> Iterator[Any]:
    """The events of ``client.stream`` (``mode="stream"``) or ``astream``, one by one; the events an async stream
    delivered before it failed are yielded before its error is raised."""
    if mode == "stream":
        yield from client.stream(model, "hi", **kwargs)
        return
    collected: list[Any] = []

    async def read() -> None:
        async for event in client.astream(model, "hi", **kwargs):
            collected.append(event)

    try:
        asyncio.run(read())
    finally:
        yield from collected


def drain(client: llmplex.Client, mode: str, model: str, **kwargs: Any) -> list[Any]:
    """Every event of a stream that ends well."""
    return list(events(client, mode, model, **kwargs))


def outcome(
    config: dict[str, Any], model: str, mode: str, deadline_after: float | None = None, **kwargs: Any
) -> tuple[type[BaseException], str, str]:
    """The error (type, message) a stream of ``model`` ends with, and the text it delivered before (one attempt).

    ``deadline_after``: the stream is held to a deadline that many seconds away, started once the model is routed
    and its provider's client built (a cold first call imports the plugin and its SDK, which a loaded machine can
    make outlast a short deadline before anything is sent).
    """
    client = llmplex.Client(config, throttle={"max_attempts": 1})
    if deadline_after is not None:
        client.provider_client(client.route(model).provider.name)
        kwargs["deadline"] = Deadline.after(deadline_after)
    texts: list[str] = []
    try:
        with pytest.raises(LLMError) as caught:
            texts.extend(e.text or "" for e in events(client, mode, model, **kwargs) if e.type == "text")
    finally:
        client.close()
    return type(caught.value), str(caught.value), "".join(texts)
