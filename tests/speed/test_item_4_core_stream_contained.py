"""Issue 34 items 4 and 5: a plugin's async stream is read by the pipeline's own loop, contained there.

Held to no deadline, ``Pipeline.astream`` reads the plugin's stream itself (no ``aiter_contained`` generator layer
between them, one fewer for every event) and keeps its mapping: a ``BaseException`` of the plugin's stream is the
call's ``LLMError`` (``plugin_aborted``); ``KeyboardInterrupt``, ``CancelledError`` and a ``BaseExceptionGroup``
pass; what is thrown in at the stream's ``yield`` passes; and the plugin's stream is closed however it ends, an
abandoned one before the consumer's ``aclose`` returns (it was left to the event loop's finalizer).

This module is also the ``foldstream:`` provider plugin the tests install: its prompt says what its stream does.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex.engine.pipeline import Pipeline
from llmplex.hookspecs import hookimpl
from llmplex.provider import ProviderInfo
from llmplex.types import Request, StreamEvent
from tests.platform.site import install_providers
from tests.support.plugin_aborts import PluginAbort, abort

CLOSED: list[str] = []  # what the plugin closed: "stream" (its generator), "source" (an iterable's own aclose)
READERS: list[object] = []  # the code of the frame that resumed the plugin's stream, at each event


async def _events(prompt: str) -> AsyncIterator[dict[str, Any]]:
    place, _, kind = prompt.partition(":")
    try:
        for word in ("one ", "two ", "three"):
            frame = inspect.currentframe()
            READERS.append(frame.f_back.f_code if frame is not None and frame.f_back is not None else None)
            yield {"text": word}
            if place == "mid":
                abort(kind)
    finally:
        CLOSED.append("stream")


class _Iterable:
    """A stream that is an async iterable (not an iterator) with an ``aclose`` of its own."""

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return _events(self.prompt)

    async def aclose(self) -> None:
        CLOSED.append("source")


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    register(ProviderInfo(name="foldstream"))


@hookimpl
def llmplex_format(request: Request) -> dict[str, Any]:
    return {"prompt": str(request.messages[-1].content)}


@hookimpl
async def llmplex_astream(payload: dict[str, Any]) -> Any:
    prompt = payload["prompt"]
    return _Iterable(prompt) if prompt == "iterable" else _events(prompt)


@hookimpl
def llmplex_parse_event(raw_event: dict[str, Any]) -> list[StreamEvent]:
    return [StreamEvent(type="text", text=raw_event["text"])]


@pytest.fixture
def llm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    install_providers(tmp_path, monkeypatch, {"foldstream": __name__})
    CLOSED.clear()
    READERS.clear()
    return llmplex.Client(throttle={"max_attempts": 3})


def _deadline(deadline: bool) -> dict[str, Any]:
    return {"timeout": 30.0} if deadline else {}


async def _texts(llm: llmplex.Client, prompt: str, deadline: bool = False) -> str:
    return "".join([e.text or "" async for e in llm.astream("foldstream:m", prompt, **_deadline(deadline))])


async def test_item_4_core_the_plugins_async_stream_is_read_by_the_pipeline_itself(llm: llmplex.Client) -> None:
    assert await _texts(llm, "fine") == "one two three"
    assert READERS.count(Pipeline.astream.__code__) == len(READERS) == 3, READERS  # nothing between them
    assert CLOSED == ["stream"]


async def test_item_4_core_an_abandoned_async_stream_is_closed_before_aclose_returns(llm: llmplex.Client) -> None:
    stream = llm.astream("foldstream:m", "fine")
    assert (await anext(stream)).text == "one "
    await stream.aclose()  # type: ignore[attr-defined]
    assert CLOSED == ["stream"]  # closed in place, not by the event loop's finalizer later


@pytest.mark.parametrize("deadline", [False, True], ids=["no deadline", "deadline"])
@pytest.mark.parametrize(
    ("kind", "name"), [("exit", "SystemExit"), ("abort", "PluginAbort"), ("genexit", "GeneratorExit")]
)
async def test_item_4_core_a_base_exception_mid_stream_is_the_calls_llm_error(
    llm: llmplex.Client, kind: str, name: str, deadline: bool
) -> None:
    texts: list[str] = []

    async def read() -> None:
        async for event in llm.astream("foldstream:m", f"mid:{kind}", **_deadline(deadline)):
            texts.append(event.text or "")

    with pytest.raises(llmplex.LLMError) as caught:
        await read()
    error = caught.value
    assert type(error) is llmplex.LLMError and error.context["aborted_with"] == name
    assert f"provider plugin 'foldstream' raised {name}" in error.message
    assert type(error.__cause__).__name__ == name and not error.retryable and error.attempts == 1
    assert texts == ["one "] and CLOSED == ["stream"]
    assert await _texts(llm, "fine", deadline) == "one two three"  # the client still works


@pytest.mark.parametrize("deadline", [False, True], ids=["no deadline", "deadline"])
@pytest.mark.parametrize(
    ("kind", "passing"),
    [("interrupt", KeyboardInterrupt), ("cancelled", asyncio.CancelledError), ("group", BaseExceptionGroup)],
)
def test_item_4_core_ctrl_c_cancellation_and_groups_pass_the_stream(
    llm: llmplex.Client, kind: str, passing: type[BaseException], deadline: bool
) -> None:
    async def read() -> None:
        async for _event in llm.astream("foldstream:m", f"mid:{kind}", **_deadline(deadline)):
            pass

    with pytest.raises(passing):
        asyncio.run(read())  # a loop of its own: Ctrl-C out of a task stops its loop
    assert CLOSED == ["stream"]


async def test_item_4_core_what_is_thrown_in_at_the_yield_passes(llm: llmplex.Client) -> None:
    stream = llm.astream("foldstream:m", "fine")
    assert (await anext(stream)).text == "one "
    with pytest.raises(PluginAbort, match="the consumer's"):
        await stream.athrow(PluginAbort("the consumer's"))  # type: ignore[attr-defined]
    for _ in range(3):  # (before the fold, the plugin's stream was closed by the event loop's finalizer)
        await asyncio.sleep(0)
    assert CLOSED == ["stream"]


async def test_item_4_core_an_iterable_stream_is_closed_by_its_own_aclose(llm: llmplex.Client) -> None:
    assert await _texts(llm, "iterable") == "one two three"
    assert CLOSED == ["stream", "source"]  # its iterator ran out; the stream itself is closed as before
