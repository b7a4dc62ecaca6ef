"""Issue 14 item 3: ``llmplex.http`` reads server-sent events as the WHATWG spec says, however the bytes are split.

The parser is checked against the spec's own examples, and, with hypothesis,
against a reference reading of the whole stream at once (written independently,
character by character): every split of a stream into chunks gives the same
events, sync and async.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterable

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmplex.http import ServerSentEvent, SSEDecoder, aiter_sse, iter_sse


def _parse(stream: bytes, splits: Iterable[int] = ()) -> list[ServerSentEvent]:
    cuts = sorted({0, len(stream), *splits})
    return list(iter_sse(stream[a:b] for a, b in itertools.pairwise(cuts)))


async def _chunks(stream: bytes, cuts: list[int]) -> AsyncIterator[bytes]:
    for a, b in itertools.pairwise(cuts):
        await asyncio.sleep(0)
        yield stream[a:b]


def _aparse(stream: bytes, splits: Iterable[int] = ()) -> list[ServerSentEvent]:
    cuts = sorted({0, len(stream), *splits})

    async def read() -> list[ServerSentEvent]:
        return [event async for event in aiter_sse(_chunks(stream, cuts))]

    return asyncio.run(read())


def _reference(stream: bytes) -> list[ServerSentEvent]:
    """The spec's algorithm over the whole stream, one character at a time."""
    text = stream.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines: list[str] = []
    line, i = "", 0
    while i < len(text):
        char = text[i]
        if char in "\r\n":
            lines.append(line)
            line = ""
            if char == "\r" and text[i + 1 : i + 2] == "\n":
                i += 1
        else:
            line += char
        i += 1
    # `line` is unterminated: the spec discards it
    events: list[ServerSentEvent] = []
    data, event_type, last_id, retry = None, "", "", None
    for line in lines:
        if line == "":
            if data is not None:
                events.append(ServerSentEvent(data[:-1], event_type or "message", last_id, retry))
            data, event_type = None, ""
            continue
        if line.startswith(":"):
            continue
        if ":" in line:
            field, value = line.split(":", 1)
            value = value[1:] if value.startswith(" ") else value
        else:
            field, value = line, ""
        if field == "data":
            data = (data or "") + value + "\n"
        elif field == "event":
            event_type = value
        elif field == "id" and "\x00" not in value:
            last_id = value
        elif field == "retry" and value and all(c in "0123456789" for c in value):
            retry = int(value)
    return events


SPEC_EXAMPLES = [
    (b"data: YHOO\ndata: +2\ndata: 10\n\n", [ServerSentEvent("YHOO\n+2\n10")]),
    (
        b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
        [ServerSentEvent("first event", id="1"), ServerSentEvent("second event"), ServerSentEvent(" third event")],
    ),
    (b"data\n\ndata\ndata\n\ndata:", [ServerSentEvent(""), ServerSentEvent("\n")]),
    (b"data:test\n\ndata: test\n\n", [ServerSentEvent("test"), ServerSentEvent("test")]),
    (
        b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\n",
        [ServerSentEvent("73857293", event="add"), ServerSentEvent("2153", event="remove")],
    ),
]


@pytest.mark.parametrize(("stream", "expected"), SPEC_EXAMPLES)
def test_item_3_the_spec_examples_parse_as_the_spec_says(stream: bytes, expected: list[ServerSentEvent]) -> None:
    assert _parse(stream) == expected
    assert _reference(stream) == expected


def test_item_3_fields_comments_line_ends_bom_and_retry() -> None:
    stream = "\ufeffretry: 1500\r\n: a comment\rid: 7\r\nevent: delta\ndata: é\r\ndata:{}\r\rdata: x\n\n".encode()
    assert _parse(stream) == [
        ServerSentEvent("é\n{}", event="delta", id="7", retry=1500),
        ServerSentEvent("x", id="7", retry=1500),
    ]


def test_item_3_only_one_leading_bom_is_dropped() -> None:
    assert _parse("\ufeff\ufeffdata: a\n\n".encode()) == []  # the second BOM is part of a field name
    assert _parse("\ufeffdata: \ufeffa\n\n".encode()) == [ServerSentEvent("\ufeffa")]


def test_item_3_ignored_fields_and_values() -> None:
    stream = b"retry: 1.5\nretry: 2x\nid: a\x00b\nfoo: bar\ndata: kept\n\n"
    assert _parse(stream) == [ServerSentEvent("kept")]


def test_item_3_a_block_without_data_is_no_event_but_its_id_carries_over() -> None:
    assert _parse(b"id: 3\nevent: ping\n\ndata: later\n\n") == [ServerSentEvent("later", id="3")]


def test_item_3_a_final_event_without_its_blank_line_is_discarded() -> None:
    """The WHATWG spec: a stream cut before an event's blank line does not dispatch it (no half JSON)."""
    assert _parse(b'data: {"a": 1}\n\ndata: {"b": 2}\n') == [ServerSentEvent('{"a": 1}')]
    assert _parse(b'data: {"a": 1}\n\ndata: {"b"') == [ServerSentEvent('{"a": 1}')]


def test_item_3_a_cr_at_the_end_of_a_chunk_ends_the_line_once() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\n") == []  # the LF of the CRLF, not a blank line
    assert decoder.feed(b"\n") == [ServerSentEvent("a")]  # and the next LF is the blank line
    assert decoder.feed(b"data: b\r") == []
    assert decoder.feed(b"") == []  # an empty chunk keeps the pending CR
    assert decoder.feed(b"\n\r") == [ServerSentEvent("b")]


def test_item_3_invalid_utf8_becomes_replacement_characters() -> None:
    assert _parse(b"data: \xff\xfe ok\n\n", splits=[7]) == [ServerSentEvent("\ufffd\ufffd ok")]


def test_item_3_json_reads_the_data() -> None:
    assert _parse(b'data: {"x": [1]}\n\n')[0].json() == {"x": [1]}


def test_item_3_a_long_line_in_tiny_chunks_is_read_once() -> None:
    """A line split into many chunks is joined once (linear), not rescanned on each chunk."""
    line = b"data: " + b"x" * 200_000 + b"\n\n"
    events = list(iter_sse(line[i : i + 3] for i in range(0, len(line), 3)))
    assert events == [ServerSentEvent("x" * 200_000)]


def test_item_3_reads_an_httpx_response_sync_and_async() -> None:
    body = b"data: one\n\nevent: two\ndata: 2\n\n"
    expected = [ServerSentEvent("one"), ServerSentEvent("2", event="two")]

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    with httpx.Client(transport=httpx.MockTransport(answer)) as client, client.stream("GET", "http://sse.test") as r:
        assert list(iter_sse(r.iter_bytes())) == expected

    async def read() -> list[ServerSentEvent]:
        async with (
            httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client,
            client.stream("GET", "http://sse.test") as r,
        ):
            return [event async for event in aiter_sse(r.aiter_bytes())]

    assert asyncio.run(read()) == expected


_LINES = st.lists(
    st.sampled_from(
        [
            'data: {"a": 1}',
            "data:x",
            "data",
            "data: é€😀",
            ": comment",
            "event: e",
            "id: 9",
            "id",
            "retry: 30",
            "retry: 3x",
            "field: v",
            "",
            "",
            "data:  two spaces",
            "\ufeffdata: bom",
        ]
    ),
    max_size=12,
)
_ENDINGS = st.sampled_from(["\n", "\r", "\r\n"])


@st.composite
def _streams(draw: st.DrawFn) -> bytes:
    lines = draw(_LINES)
    text = "".join(line + draw(_ENDINGS) for line in lines)
    if draw(st.booleans()):
        text = "\ufeff" + text
    if draw(st.booleans()):
        text += draw(st.sampled_from(["data: cut", "data: cut\r", "\r"]))
    raw = text.encode()
    if draw(st.booleans()):
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(st.sampled_from([b"\xff", b"\xe2\x82", b"\xc3"])) + raw[at:]
    return raw


@settings(max_examples=150, deadline=None)
@given(_streams())
def test_item_3_every_single_split_gives_the_reference_events(stream: bytes) -> None:
    expected = _reference(stream)
    for at in range(len(stream) + 1):
        assert _parse(stream, [at]) == expected, f"split at byte {at}"


@settings(max_examples=150, deadline=None)
@given(_streams(), st.data())
def test_item_3_any_chunking_gives_the_same_events_sync_and_async(stream: bytes, data: st.DataObject) -> None:
    splits = data.draw(st.lists(st.integers(0, len(stream)), max_size=len(stream)))
    expected = _reference(stream)
    assert _parse(stream, splits) == expected
    assert _aparse(stream, splits) == expected


@settings(max_examples=60, deadline=None)
@given(_streams())
def test_item_3_byte_by_byte_sync_and_async_agree(stream: bytes) -> None:
    every_byte = range(len(stream) + 1)
    assert _parse(stream, every_byte) == _aparse(stream, every_byte) == _reference(stream)


@settings(max_examples=100, deadline=None)
@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",))),
    st.one_of(
        st.none(),
        st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), min_size=1),
    ),
)
def test_item_3_the_kits_sse_writer_and_the_parser_agree(data: str, event: str | None) -> None:
    """What the conformance kit's ``sse()`` writes (a plugin's fake stream) reads back as the same event."""
    from llmplex.testing import sse

    text = data.replace("\r\n", "\n").replace("\r", "\n")  # data lines cannot hold a CR
    (parsed,) = _parse(sse(text, event=event))
    assert parsed.data == text
    assert parsed.event == (event or "message")
