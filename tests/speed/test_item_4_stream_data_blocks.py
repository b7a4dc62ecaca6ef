"""Issue 34 item 4: the SSE reader reads a chunk that starts with whole events of one ``data:`` line each (CRLF line
ends: Gemini's ``alt=sse`` stream) by splitting it at its blank lines once, each such block an event, instead of
splitting it into lines and parsing two lines an event; the first other block and what follows are read line by
line as before. The events, the last event id, the size bound and every split are as the line reading gives."""

from __future__ import annotations

import pytest

from llmplex.errors import LLMServerError
from llmplex.http import ServerSentEvent, SSEDecoder, iter_sse
from tests.support.sse_splits import read_noting_splits

BLOCKS = b'data: {"candidates": [1]}\r\n\r\ndata: \r\n\r\ndata:  two spaces\r\n\r\ndata: \xc3\xa9 event: x\r\n\r\n'
BLOCK_EVENTS = [
    ServerSentEvent('{"candidates": [1]}'),
    ServerSentEvent(""),
    ServerSentEvent(" two spaces"),
    ServerSentEvent("\u00e9 event: x"),
]


def test_item_4_a_chunk_of_whole_data_events_is_not_split_into_lines() -> None:
    assert read_noting_splits([BLOCKS]) == (BLOCK_EVENTS, ["\r\n\r\n"])
    assert read_noting_splits([b"data: a\r\n\r\n", b"data: b\r\n\r\n"]) == (
        [ServerSentEvent("a"), ServerSentEvent("b")],
        ["\r\n\r\n", "\r\n\r\n"],
    )


def test_item_4_what_is_left_after_data_events_is_read_by_lines() -> None:
    events, splits = read_noting_splits(
        [BLOCKS + b"id: 7\r\n\r\ndata: one\r\ndata: two\r\n\r\ndata: ha", b"lf\r\n", b"\r\n" + BLOCKS + b"data: cut"]
    )
    assert events == [
        *BLOCK_EVENTS,
        ServerSentEvent("one\ntwo", id="7"),
        ServerSentEvent("half", id="7"),
        *(event._replace(id="7") for event in BLOCK_EVENTS),  # the id carries over to the whole events
    ]
    # the first chunk's rest, the second (a blank line pending: by lines), the third (it starts with one)
    assert splits == ["\r\n\r\n", "\r\n", "\r\n", "\r\n"]


@pytest.mark.parametrize(
    "body",
    [
        BLOCKS,
        BLOCKS + b": a comment\r\n\r\nid: 3\r\n\r\n" + BLOCKS + b"retry: 5\r\n\r\n" + BLOCKS,
        BLOCKS + b"event: named\r\ndata: 1\r\ndata: 2\r\n\r\n" + BLOCKS + b"data:no space\r\n\r\n" + BLOCKS,
        BLOCKS + b"data: lone CR\r" + b"\r\n" + BLOCKS + b"data: lone LF\n\r\n" + BLOCKS + b"\r\n\r\n" + BLOCKS,
        b"\xef\xbb\xbf" + BLOCKS + b"id: 9\r\ndata: unfinished\r\n",
        b"data: a\r\n\r\n\xef\xbb\xbfdata: b\r\n\r\nid\r\ndata: c\r\n\r\ndata: ends with a CR\r\n\r",
    ],
    ids=["blocks", "comment, id, retry", "named, two data lines, no space", "lone CR and LF", "BOM, cut", "odd"],
)
def test_item_4_data_events_in_every_split_read_as_line_by_line(body: bytes) -> None:
    line_by_line = list(iter_sse([body[at : at + 1] for at in range(len(body))]))  # never a whole block
    assert list(iter_sse([body])) == line_by_line
    for cut in range(len(body) + 1):
        assert list(iter_sse([body[:cut], body[cut:]])) == line_by_line
    for cut in range(0, len(body) + 1, 7):
        for second in range(cut, len(body) + 1, 5):
            assert list(iter_sse([body[:cut], body[cut:second], body[second:]])) == line_by_line


def test_item_4_a_partial_line_after_data_events_is_held_as_by_lines() -> None:
    decoder = SSEDecoder(max_event_bytes=40)
    assert decoder.feed(BLOCKS + b"data: " + b"x" * 30) == BLOCK_EVENTS  # a chunk of 119 bytes, 36 of them held
    assert decoder.feed(b"\r\n\r\n") == [ServerSentEvent("x" * 30)]
    assert decoder.feed(BLOCKS + b"data: " + b"x" * 20 + b"\r\n") == BLOCK_EVENTS  # an unfinished event: 27 held
    with pytest.raises(LLMServerError, match="longer than 40 bytes"):
        decoder.feed(b"data: " + b"x" * 20 + b"\r\n")
    assert decoder._line == [] and decoder._data == []
    with pytest.raises(LLMServerError, match="longer than 40 bytes"):
        decoder.feed(BLOCKS + b"data: " + b"x" * 40)
    assert decoder._line == [] and decoder._data == []


@pytest.mark.parametrize(
    ("whole", "end"),
    [(b"event: a\ndata: 1\n\nevent: b\ndata: 2\n\n", b"\n"), (b"data: 1\r\n\r\ndata: 2\r\n\r\n", b"\r\n")],
    ids=["named events", "data events"],
)
def test_item_4_a_partial_line_after_whole_events_is_sized_as_by_lines(whole: bytes, end: bytes) -> None:
    partial = "data: \u00e9\u20ac".encode()  # 8 characters, 12 bytes
    by_lines, after_whole = SSEDecoder(max_event_bytes=8), SSEDecoder(max_event_bytes=8)
    events = by_lines.feed(b":" + end + whole + partial)  # a comment first: the chunk read by lines only
    assert after_whole.feed(whole + partial) == events and len(events) == 2
    assert after_whole.feed(end + end) == by_lines.feed(end + end) == [ServerSentEvent("\u00e9\u20ac")]
