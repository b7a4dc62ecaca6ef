"""Issue 34 item 5: a Messages stream's text deltas are written around their text, not encoded whole.

Every ``content_block_delta`` event of a text block is the same but for the block's index and the text: the
encoder built each event's dict and encoded all of it for every chunk (0.7 us a chunk). It now writes the
event's fixed bytes around the encoded text (a 32-chunk stream's encoding 0.57x). What must not change: the
bytes, exactly those of the whole event encoded, in every block a stream opens (text after a tool call, after
thinking), and every other event.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from llmplex.gateway.apis import anthropic_messages
from llmplex.gateway.apis.anthropic_messages import MessagesStreamEncoder
from llmplex.gateway.wire import dumps
from llmplex.types import Response, StreamEvent, ToolCall, Usage

TEXTS = ["Hello", ' with "quotes", \\ and a\nnew line', "ünïcode ✓ 🎉", "\u2028 and \x00"]


class WholeEvents(MessagesStreamEncoder):
    """The encoder as it was: every text delta event's whole dict encoded."""

    def _text_delta(self, text: str) -> bytes:
        return self._event("content_block_delta", {"index": self._index, "delta": {"type": "text_delta", "text": text}})


def _events() -> list[StreamEvent]:
    call = ToolCall(id="toolu_1", name="get", arguments='{"city": "Zürich"}')
    usage = Usage(input_tokens=3, output_tokens=9)
    answer = Response(text="".join(TEXTS) * 2, tool_calls=(call,), usage=usage, finish_reason="tool_calls")
    return [
        *(StreamEvent.text_delta(text) for text in TEXTS),
        StreamEvent(type="tool_call", tool_call_index=0, tool_call_id="toolu_1", tool_name="get"),
        StreamEvent(type="tool_call", tool_call_index=0, arguments_delta='{"city": "Zürich"}'),
        *(StreamEvent.text_delta(text) for text in TEXTS),  # a second text block, at index 2
        StreamEvent.response_event(answer),
    ]


def _encoded(encoder_type: type[MessagesStreamEncoder], monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    numbers = itertools.count()
    monkeypatch.setattr(anthropic_messages, "new_id", lambda prefix: f"{prefix}{next(numbers)}")
    encoder = encoder_type('odd "model" ✓')
    return [encoder.encode(event) for event in _events()]


def test_item_5_messages_deltas_are_the_whole_events_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    encoded, whole = _encoded(MessagesStreamEncoder, monkeypatch), _encoded(WholeEvents, monkeypatch)
    assert encoded == whole
    assert b'"index":2,"delta":{"type":"text_delta","text":"Hello"}' in b"".join(encoded)


def test_item_5_a_text_delta_event_is_not_encoded_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[Any] = []

    def counting(value: Any) -> bytes:
        encoded.append(value)
        return dumps(value)

    monkeypatch.setattr(anthropic_messages, "dumps", counting)
    encoder = MessagesStreamEncoder("m")
    for number in range(10):
        encoder.encode(StreamEvent.text_delta(f"word {number}"))
    deltas = [value for value in encoded if isinstance(value, dict) and value.get("type") == "content_block_delta"]
    assert deltas == []
    assert encoded.count("word 9") == 1
