"""Issue 34 item 4: llmplex-anthropic's sync stream per chunk.

A text chunk's event is built by ``StreamEvent.text_delta`` looked up once, when the module is imported (the class
attribute of a pydantic model, looked up through its metaclass as a new bound method, cost about 0.1 µs a chunk).
``usage_values`` of a usage without ``output_tokens_details`` (the stream's end, nearly always) reads no details
(``field`` of ``None`` made an ABC ``isinstance`` check). The events and counts are as before.
"""

from __future__ import annotations

from typing import Any

import pytest
from llmplex_anthropic import response
from llmplex_anthropic.streaming import parse_stream_event

from llmplex.types import Message, Request, StreamEvent, StreamState
from tests.plugins.anthropic.wire import message_start

START = message_start({"input_tokens": 9}, model="claude-x", message_id="msg_1")


def _delta(text: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}


def _not_looked_up(*args: Any, **kwargs: Any) -> StreamEvent:
    raise AssertionError("StreamEvent.text_delta looked up for a chunk")


def test_item_4_anthropic_text_chunk_does_not_look_up_text_delta(monkeypatch: pytest.MonkeyPatch) -> None:
    state = StreamState(Request(model="claude", messages=(Message.user("hi"),)))
    assert parse_stream_event(START, state) == []
    monkeypatch.setattr(StreamEvent, "text_delta", _not_looked_up)
    events = [parse_stream_event(_delta(text), state) for text in ("Hel", "lo", "")]
    assert events == [
        [StreamEvent(type="text", text="Hel", response_id="msg_1")],
        [StreamEvent(type="text", text="lo", response_id="msg_1")],
        [],
    ]
    assert events[0][0].model_fields_set == {"type", "text", "response_id", "model"}


def _not_called(value: Any, name: str) -> Any:
    raise AssertionError(f"field read {name!r} of {value!r}")


def test_item_4_anthropic_usage_values_without_details_reads_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(response, "field", _not_called)
    assert response.usage_values({"input_tokens": 9, "output_tokens": 7}) == {
        "input_tokens": 9,
        "output_tokens": 7,
        "cached_tokens": 0,
        "cache_write_tokens": 0,
        "cache_write_1h_tokens": 0,
        "reasoning_tokens": 0,
    }
    monkeypatch.undo()
    assert response.usage_values({"output_tokens": 8}, {"thinking_tokens": 5})["reasoning_tokens"] == 5
