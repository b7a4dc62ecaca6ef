"""Issue 34 item 4: the SSE reader reads a chunk of whole named events (``event:`` and one ``data:`` line each, LF
line ends: Anthropic's and OpenAI Responses' streams) with one pattern match an event, instead of splitting the
chunk into lines and parsing three lines an event; what is left of the chunk (a partial event, other fields) is
read line by line as before. The events, the last event id, the size bound and every split are as before."""

from __future__ import annotations

from typing import Any

import pytest

from llmplex.errors import LLMServerError
from llmplex.http import ServerSentEvent, SSEDecoder, iter_sse

NAMED = (
    b'event: message_start\ndata: {"type": "message_start"}\n\n'
    b"event: \ndata: unnamed: is a message\n\n"
    b"event: delta\ndata:  two spaces\n\n"
    b"event: delta\ndata: \n\n"
)
NAMED_EVENTS = [
    ServerSentEvent('{"type": "message_start"}', "message_start"),
    ServerSentEvent("unnamed: is a message"),
    ServerSentEvent(" two spaces", "delta"),
    ServerSentEvent("", "delta"),
]


class _Text(str):
    """Decoded text that notes its splits."""

    __slots__ = ()
    splits: list[str] = []

    def split(self, *args: Any, **kwargs: Any) -> list[str]:
        self.splits.append(args[0])
        return super().split(*args, **kwargs)


class _Decoder:
    def decode(self, chunk: bytes) -> str:
        return _Text(chunk.decode())


def _read(chunks: list[bytes]) -> tuple[list[ServerSentEvent], list[str]]:
    _Text.splits = []
    decoder = SSEDecoder()
    decoder._text = _Decoder()  # type: ignore[assignment]
    decoder._started = True  # no byte order mark to drop (dropping it would make the text a plain str)
    return list(decoder.read(chunks)), _Text.splits


def test_item_4_a_chunk_of_whole_named_events_is_not_split_into_lines() -> None:
    assert _read([NAMED]) == (NAMED_EVENTS, [])


def test_item_4_what_is_left_after_named_events_is_read_by_lines() -> None:
    events, splits = _read([NAMED + b"event: cut\ndata: hal", b"f\n", b"\nid: 7\ndata: x\n\n" + NAMED])
    assert events == [*NAMED_EVENTS, ServerSentEvent("half", "cut"), ServerSentEvent("x", id="7")] + [
        event._replace(id="7") for event in NAMED_EVENTS
    ]
    assert splits == ["\n", "\n"]  # the second chunk (a blank line pending) and the third (it starts with one)


@pytest.mark.parametrize(
    "body",
    [
        NAMED,
        NAMED + b": a comment\n\nevent: x\ndata: 1\ndata: 2\n\n",
        b"data: first\n\n" + NAMED + b"retry: 5\nevent: y\ndata: z\n\n" + NAMED,
        b"event: named\nid: 3\ndata: a\n\n" + NAMED + b"event: lone\n\n" + NAMED,
        b"\xef\xbb\xbf" + NAMED + b"event: e\ndata: \xc3\xa9\n\n",
    ],
    ids=["named", "comment and two data lines", "unnamed, retry", "id, a block without data", "BOM, UTF-8"],
)
def test_item_4_named_events_in_every_split_read_as_line_by_line(body: bytes) -> None:
    whole = list(iter_sse([body]))
    assert list(iter_sse([body[at : at + 1] for at in range(len(body))])) == whole  # never the pattern
    for cut in range(len(body) + 1):
        assert list(iter_sse([body[:cut], body[cut:]])) == whole


def test_item_4_a_partial_line_after_named_events_is_sized_alone() -> None:
    decoder = SSEDecoder(max_event_bytes=40)
    assert decoder.feed(NAMED + b"data: " + b"x" * 10) == NAMED_EVENTS  # a chunk of 130 bytes, 16 of them held
    assert decoder.feed(b"\n\n") == [ServerSentEvent("x" * 10)]
    assert decoder.feed(NAMED + b"event: next\ndata: " + b"x" * 30) == NAMED_EVENTS  # 36 held
    assert decoder.feed(b"\n\n") == [ServerSentEvent("x" * 30, "next")]
    with pytest.raises(LLMServerError, match="longer than 40 bytes"):
        decoder.feed(NAMED + b"data: " + b"x" * 40)
    assert decoder._line == [] and decoder._data == []
