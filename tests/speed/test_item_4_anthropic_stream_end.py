"""Issue 34 item 4: the end of llmplex-anthropic's stream (``message_delta``, ``message_stop``).

``message_delta``'s usage and finish events are built by ``StreamEvent.usage_of`` and ``StreamEvent.finish_event``
looked up once, when the module is imported (a pydantic model's class attribute is looked up through its metaclass,
a new bound method each time). The events, their usage (cache counts, thinking tokens) and finish reasons are as
validation builds them.
"""

from __future__ import annotations

from typing import Any

import pytest
from llmplex_anthropic.streaming import parse_stream_event

from llmplex.types import Message, Request, StreamEvent, StreamState, Usage
from tests.plugins.anthropic.wire import message_start

START = message_start(
    {
        "input_tokens": 9,
        "output_tokens": 1,
        "cache_read_input_tokens": 4,
        "cache_creation": {"ephemeral_5m_input_tokens": 2, "ephemeral_1h_input_tokens": 3},
    },
    model="claude-x",
    message_id="msg_1",
)
DELTA = {
    "type": "message_delta",
    "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
    "usage": {"output_tokens": 7, "output_tokens_details": {"thinking_tokens": 5}},
}


def _not_looked_up(*args: Any, **kwargs: Any) -> StreamEvent:
    raise AssertionError("a StreamEvent builder looked up at the stream's end")


def _state() -> StreamState:
    state = StreamState(Request(model="claude", messages=(Message.user("hi"),)))
    assert parse_stream_event(START, state) == []
    return state


def test_item_4_anthropic_stream_end_does_not_look_up_event_builders(monkeypatch: pytest.MonkeyPatch) -> None:
    state = _state()
    monkeypatch.setattr(StreamEvent, "usage_of", _not_looked_up)
    monkeypatch.setattr(StreamEvent, "finish_event", _not_looked_up)
    events = parse_stream_event(DELTA, state)
    assert parse_stream_event({"type": "message_stop"}, state) == []
    monkeypatch.undo()
    usage = Usage(
        input_tokens=18,
        output_tokens=7,
        cached_tokens=4,
        cache_write_tokens=5,
        cache_write_1h_tokens=3,
        reasoning_tokens=5,
    )
    assert events == [
        StreamEvent(type="usage", usage=usage, response_id="msg_1", model="claude-x"),
        StreamEvent(type="finish", finish_reason="length", response_id="msg_1"),
    ]
    assert events[0].usage is not None
    assert events[0].usage.total_tokens == 25
    assert events[0].usage.model_fields_set == usage.model_fields_set
    assert events[1].model_fields_set == {"type", "finish_reason", "response_id", "model"}
