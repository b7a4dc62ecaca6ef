"""Issue 34 item 4: the SSE reader reads a chunk of whole named events (``event:`` and one ``data:`` line each, LF
line ends: Anthropic's and OpenAI Responses' streams) with one pattern match an event, instead of splitting the
chunk into lines and parsing three lines an event; what is left of the chunk (a partial event, other fields) is
read line by line as before. The events, the last event id, the size bound and every split are as before."""

from __future__ import annotations

import pytest

from llmplex.errors import LLMServerError
from llmplex.http import ServerSentEvent, SSEDecoder, iter_sse
from tests.support.sse_splits import read_noting_splits

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


def test_item_4_a_chunk_of_whole_named_events_is_not_split_into_lines() -> None:
    assert read_noting_splits([NAMED]) == (NAMED_EVENTS, [])


def test_item_4_what_is_left_after_named_events_is_read_by_lines() -> None:
    events, splits = read_noting_splits([NAMED + b"event: cut\ndata: hal", b"f\n", b"\nid: 7\ndata: x\n\n" + NAMED])
    assert events == [*NAMED_EVENTS, ServerSentEvent("half", "cut"), ServerSentEvent("x", id="7")] + [
        event._replace(id="7") for event in NAMED_EVENTS
    ]
    # what is left of the first chunk, the second (a blank line pending) and the third (it starts with one)
    assert splits == ["\n", "\n", "\n"]


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
