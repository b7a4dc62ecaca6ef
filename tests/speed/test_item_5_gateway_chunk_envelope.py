"""Issue 34 item 5: a Chat Completions stream's chunks are written around their delta, not encoded whole.

Every ``chat.completion.chunk`` of a stream carries the same id, object, created time and model: the encoder
built the chunk's dict and encoded all of it for every chunk (1.3 us a chunk with orjson). It now encodes that
envelope once a stream and only each chunk's delta and finish reason (0.5x a 32-chunk stream's encoding). What
must not change: the bytes, exactly those of the whole chunk encoded (key order, escapes, ``usage: null`` when
the client asked for usage, the usage chunk and ``[DONE]`` at the end).
"""

from __future__ import annotations

from typing import Any

import pytest

from llmplex.gateway.apis import openai_chat
from llmplex.gateway.apis.openai_chat import ChatStreamEncoder
from llmplex.gateway.calls import sse
from llmplex.gateway.wire import dumps
from llmplex.types import Response, StreamEvent, Usage

MODELS = ["stub:gpt-4o-mini", 'odd "model" \\ name', "modèle:ünïcode-✓"]
TEXTS = ["Hello", ' with "quotes", \\ and a\nnew line', "ünïcode ✓ 🎉", "\u2028 and \x00", ""]


class WholeChunks(ChatStreamEncoder):
    """The encoder as it was: every chunk's whole dict encoded."""

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        chunk: dict[str, Any] = {
            "id": self._id,
            "object": "chat.completion.chunk",
            "created": self._created,
            "model": self._model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        if self._include_usage:
            chunk["usage"] = None
        return sse(dumps(chunk))


def _events(finish: str) -> list[StreamEvent]:
    usage = Usage(input_tokens=3, output_tokens=len(TEXTS))
    tool = [
        StreamEvent(type="tool_call", tool_call_index=0, tool_call_id="call_1", tool_name="get"),
        StreamEvent(type="tool_call", tool_call_index=0, arguments_delta='{"city": "Zürich"}'),
    ]
    answer = Response(text="".join(TEXTS), usage=usage, finish_reason=finish)
    return [*(StreamEvent.text_delta(text) for text in TEXTS), *tool, StreamEvent.response_event(answer)]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("include_usage", [False, True])
@pytest.mark.parametrize("finish", ["stop", "length", "content_filter"])
def test_item_5_chunks_are_the_whole_chunks_bytes(model: str, include_usage: bool, finish: str) -> None:
    encoder, whole = ChatStreamEncoder(model, include_usage), WholeChunks(model, include_usage)
    whole._id, whole._created = encoder._id, encoder._created
    for event in _events(finish):
        assert encoder.encode(event) == whole.encode(event)


def test_item_5_a_chunks_envelope_is_encoded_once_a_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[Any] = []

    def counting(value: Any) -> bytes:
        encoded.append(value)
        return dumps(value)

    monkeypatch.setattr(openai_chat, "dumps", counting)
    encoder = ChatStreamEncoder("stub:gpt-4o-mini", False)
    encoded.clear()
    for number in range(10):
        encoder.encode(StreamEvent.text_delta(f"word {number}"))
    whole = [value for value in encoded if isinstance(value, dict) and value.get("object") == "chat.completion.chunk"]
    assert whole == []
    assert encoded.count({"content": "word 9"}) == 1
