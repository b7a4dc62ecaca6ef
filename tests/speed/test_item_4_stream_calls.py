"""Issue 34 item 4: fewer calls a streamed chunk and at a stream's end, the events and the answer as before.

Gemini's parser reads a plain chunk in ``parse_chunk`` itself (no ``_plain_chunk`` call); a text event built
without validation equals the validated one; a text answer is assembled without sorting (and walking) its empty
tool calls; core asks the parser's kept usage for an event only when there is one (``state.usage_so_far``)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pydantic
import pytest
from llmplex_gemini.streaming import parse_chunk

import llmplex
from llmplex.engine import pipeline
from llmplex.engine.assembly import StreamAssembler
from llmplex.types import Message, Request, StreamEvent, StreamState, Usage
from tests.plugins.gemini.wire import MODEL, stream_body, text_part, usage
from tests.speed.gemini_stream_cases import _chunk, client, read_events, server, via
from tests.support.stream_server import Reply, StreamServer

__all__ = ["client", "server", "via"]


@contextmanager
def _calls() -> Iterator[list[str]]:
    """The Python functions and built-ins called inside the block (by name, in order)."""
    seen: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            seen.append(frame.f_code.co_name)
        elif event == "c_call":
            seen.append(getattr(arg, "__name__", "?"))

    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)


def _state() -> StreamState:
    return StreamState(Request(model=MODEL, messages=[Message(role="user", content="hi")]))


def test_item_4_gemini_text_chunk_is_read_in_parse_chunk_itself() -> None:
    state = _state()
    chunk = _chunk([text_part("Hel")], usage_metadata=usage(5, 1))
    with _calls() as seen:
        events = parse_chunk(chunk, state)
    python = [name for name in seen if name in {"_plain_chunk", "text_delta"}]
    assert python == ["text_delta"]  # one Python call: the event
    assert events == [StreamEvent(type="text", text="Hel", response_id=chunk.get("responseId"), model=MODEL)]
    assert state.usage_so_far is not None and state.usage_so_far().usage == Usage(
        input_tokens=5, output_tokens=1, total_tokens=6
    )


def test_item_4_gemini_text_that_is_no_str_is_still_refused() -> None:
    with pytest.raises(pydantic.ValidationError):
        parse_chunk({"candidates": [{"content": {"parts": [{"text": 5}]}}]}, _state())


@pytest.mark.parametrize(("response_id", "model"), [("r1", "m"), (None, None), ("r1", None)])
def test_item_4_text_event_unvalidated_is_the_validated_one(response_id: str | None, model: str | None) -> None:
    event = StreamEvent.text_delta("Hi", response_id, model)
    validated = StreamEvent(type="text", text="Hi", response_id=response_id, model=model)
    assert event == validated and hash(event) == hash(validated)
    assert event.model_fields_set == {"type", "text", "response_id", "model"}
    assert event.model_dump() == validated.model_dump() and event.__pydantic_extra__ is None
    assert event.__pydantic_private__ is None
    assert StreamEvent.text_delta("Hi", response_id, model).model_fields_set is not event.model_fields_set


def test_item_4_text_answer_is_assembled_without_sorting_calls() -> None:
    assembler = StreamAssembler("local", "m")
    assembler.add(StreamEvent.text_delta("Hi", "r1"))
    with _calls() as seen:
        answer = assembler.response(1, 0.5)
    assert "sorted" not in seen and "<genexpr>" not in seen
    assert (answer.text, answer.tool_calls, answer.finish_reason, answer.response_id) == ("Hi", (), "stop", "r1")


def test_item_4_calls_are_still_assembled_in_index_order() -> None:
    assembler = StreamAssembler("local", "m")
    for index, name in ((1, "b"), (0, "a")):
        kwargs: dict[str, Any] = {"tool_call_index": index, "tool_name": name, "arguments_delta": "{}"}
        assembler.add(StreamEvent(type="tool_call", **kwargs))
    answer = assembler.response(1, 0.5)
    assert [(call.id, call.name) for call in answer.tool_calls] == [("call_0", "a"), ("call_1", "b")]
    assert answer.finish_reason == "tool_calls"


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How often ``Pipeline._unreported`` is asked (and the usage events it gave)."""
    asked: list[int] = []
    unreported = pipeline.Pipeline._unreported

    def counting(self: pipeline.Pipeline, state: StreamState, assembler: StreamAssembler) -> Any:
        event = unreported(self, state, assembler)
        asked.append(0 if event is None else 1)
        return event

    monkeypatch.setattr(pipeline.Pipeline, "_unreported", counting)
    return asked


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_stream_end_asks_for_kept_usage_only_when_there_is_some(
    mode: str,
    server: StreamServer,
    client: llmplex.Client,
    via: Callable[[bool], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    via(False)
    asked = _counted(monkeypatch)
    reported = [_chunk([text_part("Hel")], usage_metadata=usage(5, 1)), _chunk([], "STOP", usage_metadata=usage(5, 2))]
    server.script(Reply.events(stream_body(reported)))
    events = read_events(client, mode)
    assert [event.type for event in events] == ["text", "usage", "finish", "response"]
    assert asked == []  # the finish handed the usage on: nothing kept, nothing asked
    kept = [_chunk([text_part(text)], usage_metadata=usage(5, index + 1)) for index, text in enumerate(("Hel", "lo"))]
    server.script(Reply.events(stream_body(kept)))  # no finish reason: the usage is still kept at the end
    events = read_events(client, mode)
    assert [event.type for event in events] == ["text", "text", "usage", "response"]
    assert asked == [1]
    final = events[-1].response
    assert final is not None and final.text == "Hello" and final.usage.output_tokens == 2
