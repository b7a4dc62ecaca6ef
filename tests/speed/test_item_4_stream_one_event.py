"""Issue 34 item 4: core's stream loop hands on a chunk that parsed to one event (nearly every chunk) without
iterating its list twice, and ``StreamAssembler.add`` reads an event's type once and writes the answer's id and
model only when the event carries them. The events and the answer are as before."""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

import llmplex
from llmplex.engine import pipeline
from llmplex.engine.assembly import StreamAssembler
from llmplex.types import StreamEvent, Usage
from tests.plugins.gemini.wire import MODEL, stream_body, text_part, usage
from tests.speed.gemini_stream_cases import _chunk, client, server, via
from tests.support.stream_server import Reply, StreamServer

__all__ = ["client", "server", "via"]


def _chunks(count: int) -> list[dict[str, Any]]:
    """``count`` text chunks (one event each), then the finish (a usage and a finish event)."""
    texts = [_chunk([text_part(f"w{index} ")], usage_metadata=usage(5, index + 1)) for index in range(count)]
    return [*texts, _chunk([], "STOP", usage_metadata=usage(5, count))]


def _loop_lines(function: Callable[..., Any]) -> set[int]:
    """The line numbers of ``function``'s ``for event in events:`` loops."""
    lines, first = inspect.getsourcelines(function)
    return {first + at for at, line in enumerate(lines) if line.strip() == "for event in events:"}


def _traced(read: Callable[[], list[StreamEvent]]) -> tuple[list[StreamEvent], list[int]]:
    """``read()``'s events and the loop lines of ``Pipeline.stream``/``astream`` it ran."""
    code = {pipeline.Pipeline.stream.__code__, pipeline.Pipeline.astream.__code__}
    lines = _loop_lines(pipeline.Pipeline.stream) | _loop_lines(pipeline.Pipeline.astream)
    ran: list[int] = []

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and frame.f_lineno in lines:
            ran.append(frame.f_lineno)
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code in code else None

    sys.settrace(calls)
    try:
        return read(), ran
    finally:
        sys.settrace(None)


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_one_event_chunks_pass_the_loop_without_iterating_a_list(
    mode: str, server: StreamServer, client: llmplex.Client, via: Callable[[bool], None]
) -> None:
    via(False)
    model = f"g:{MODEL}"

    def read() -> list[StreamEvent]:
        if mode == "stream":
            return list(client.stream(model, "hi"))

        async def events() -> list[StreamEvent]:
            return [event async for event in client.astream(model, "hi")]

        return asyncio.run(events())

    ran = []
    for count in (3, 9):
        server.script(Reply.events(stream_body(_chunks(count))))
        events, lines = _traced(read)
        assert [event.type for event in events] == ["text"] * count + ["usage", "finish", "response"]
        final = events[-1].response
        assert final is not None and final.text == "".join(f"w{index} " for index in range(count))
        assert final.usage.output_tokens == count
        ran.append(len(lines))
    assert ran[0] == ran[1] > 0  # only the last chunk's two events went through the loops, however many came before


class _Event:
    """A usage event that counts the reads of its type."""

    def __init__(self, usage: Usage) -> None:
        self.reads = 0
        self.usage, self.response_id, self.model = usage, None, None

    @property
    def type(self) -> str:
        self.reads += 1
        return "usage"


class _Assembler(StreamAssembler):
    """A ``StreamAssembler`` that notes the fields written to it."""

    __slots__ = ("written",)

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "written":
            self.written.append(name)
        super().__setattr__(name, value)


def test_item_4_assembler_reads_the_type_once_and_writes_only_given_ids() -> None:
    assembler = _Assembler.__new__(_Assembler)
    assembler.written = []
    StreamAssembler.__init__(assembler, "local", "m")
    assembler.written.clear()
    usage_event = _Event(Usage(input_tokens=3, output_tokens=4))
    assembler.add(usage_event)  # type: ignore[arg-type]
    assert usage_event.reads == 1 and assembler.written == ["usage"]
    assembler.add(StreamEvent.text_delta("Hi", "r1", "m-2"))
    assert assembler.written == ["usage", "response_id", "model"]
    assert (assembler.text, assembler.usage, assembler.response_id, assembler.model) == (
        ["Hi"],
        Usage(input_tokens=3, output_tokens=4),
        "r1",
        "m-2",
    )
