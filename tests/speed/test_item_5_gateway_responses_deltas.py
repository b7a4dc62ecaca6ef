"""Issue 34 item 5: a Responses stream's text deltas are written around their text, not encoded whole.

Every ``response.output_text.delta`` event of an output item carries the same type, item id, output index and
content index: the encoder built each event's dict (its place spread into it) and encoded all of it for every
chunk (1.9 us a chunk). It now encodes the item's place once, as the item opens, and each delta's sequence
number and text only (a 32-chunk stream's encoding 0.56x). What must not change: the bytes, exactly those of the
whole event encoded, through items opened and closed around tool calls, and every other event.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from llmplex.gateway.apis import openai_responses
from llmplex.gateway.apis.openai_responses import ResponsesStreamEncoder
from llmplex.gateway.calls import CallSpec
from llmplex.gateway.wire import dumps
from llmplex.types import Response, StreamEvent, ToolCall, Usage

TEXTS = ["Hello", ' with "quotes", \\ and a\nnew line', "ünïcode ✓ 🎉", "\u2028 and \x00"]


class WholeEvents(ResponsesStreamEncoder):
    """The encoder as it was: every delta event's whole dict encoded."""

    def _text_delta(self, text: str) -> bytes:
        index = len(self._output) - 1
        where = {"item_id": self._output[index]["id"], "output_index": index, "content_index": 0}
        return self._event("response.output_text.delta", {**where, "delta": text, "logprobs": []})


def _events() -> list[StreamEvent]:
    call = ToolCall(id="call_1", name="get", arguments='{"city": "Zürich"}')
    usage = Usage(input_tokens=3, output_tokens=9)
    answer = Response(text="".join(TEXTS) * 2, tool_calls=(call,), usage=usage, finish_reason="tool_calls")
    return [
        *(StreamEvent.text_delta(text, response_id="resp_1") for text in TEXTS),
        StreamEvent(type="tool_call", tool_call_index=0, tool_call_id="call_1", tool_name="get"),
        StreamEvent(type="tool_call", tool_call_index=0, arguments_delta='{"city": "Zürich"}'),
        *(StreamEvent.text_delta(text) for text in TEXTS),  # a second message item, at output index 2
        StreamEvent.response_event(answer),
    ]


def _encoded(encoder_type: type[ResponsesStreamEncoder], monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    numbers = itertools.count()
    monkeypatch.setattr(openai_responses, "new_id", lambda prefix: f"{prefix}{next(numbers)}")
    monkeypatch.setattr(openai_responses, "now", lambda: 1_700_000_000)
    encoder = encoder_type(CallSpec(model='odd "model" ✓', messages=[]))
    return [encoder.encode(event) for event in _events()]


def test_item_5_responses_deltas_are_the_whole_events_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    encoded, whole = _encoded(ResponsesStreamEncoder, monkeypatch), _encoded(WholeEvents, monkeypatch)
    assert encoded == whole
    assert sum(chunk.count(b"event: response.output_text.delta\n") for chunk in encoded) == 2 * len(TEXTS)
    assert b'"output_index":2,"content_index":0,"delta":"Hello"' in b"".join(encoded)


def test_item_5_a_delta_events_place_is_encoded_once_an_item(monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[Any] = []

    def counting(value: Any) -> bytes:
        encoded.append(value)
        return dumps(value)

    monkeypatch.setattr(openai_responses, "dumps", counting)
    encoder = ResponsesStreamEncoder(CallSpec(model="m", messages=[]))
    for number in range(10):
        encoder.encode(StreamEvent.text_delta(f"word {number}"))
    deltas = [value for value in encoded if isinstance(value, dict) and value.get("type", "").endswith("text.delta")]
    assert deltas == []
    assert encoded.count("word 9") == 1
