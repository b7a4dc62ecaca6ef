"""Issue 34 item 4: the SSE reader splits a chunk whose lines all end with CRLF (Gemini's event stream) with
``str.split`` at CRLF, not the regular expression it keeps for a lone CR or LF. The events are the same
for every split of the bytes, and lone CRs, CRs split from their LF, and mixed endings are read as before."""

from __future__ import annotations

import re
from typing import Any

import pytest

from llmplex.http import ServerSentEvent, iter_sse
from llmplex.http import sse as sse_module

LF_BODY = (
    b'data: {"text": "Hel"}\n\n'
    b"event: delta\ndata: one\ndata: two\n\n"
    b": a comment\nid: 7\nretry: 300\ndata: \xc3\xa9t\xc3\xa9\n\n"
    b"data: last\n\n"
)
EXPECTED = [
    ServerSentEvent('{"text": "Hel"}'),
    ServerSentEvent("one\ntwo", "delta"),
    ServerSentEvent("\u00e9t\u00e9", "message", "7", 300),
    ServerSentEvent("last", "message", "7", 300),
]


class _CountingPattern:
    """``_LINE_END`` that counts its splits."""

    def __init__(self) -> None:
        self.splits = 0

    def split(self, text: str) -> Any:
        self.splits += 1
        return re.split(r"\r\n|\r|\n", text)


def _splits(body: bytes) -> list[list[bytes]]:
    """The body whole, cut once at every byte, and byte by byte."""
    cuts = [[body[:at], body[at:]] for at in range(1, len(body))]
    return [[body], *cuts, [body[at : at + 1] for at in range(len(body))]]


@pytest.mark.parametrize("ending", [b"\r\n", b"\r", b"\n"], ids=repr)
def test_item_4_every_split_of_each_line_ending_gives_the_same_events(ending: bytes) -> None:
    body = LF_BODY.replace(b"\n", ending)
    for chunks in _splits(body):
        assert list(iter_sse(chunks)) == EXPECTED


def test_item_4_mixed_line_endings_are_read_as_before() -> None:
    body = b'data: {"text": "Hel"}\r\n\r' + b"event: delta\ndata: one\r\ndata: two\r\r" + LF_BODY.split(b"\n\n", 2)[2]
    for chunks in _splits(body):
        assert list(iter_sse(chunks)) == EXPECTED


def test_item_4_crlf_chunks_are_split_without_the_regular_expression(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk of CRLF lines is not split by the pattern (it was, for every network chunk); one holding a lone CR,
    or ending with a CR whose LF is still to come, is."""
    pattern = _CountingPattern()
    monkeypatch.setattr(sse_module, "_LINE_END", pattern)
    body = LF_BODY.replace(b"\n", b"\r\n")
    assert list(iter_sse([body])) == EXPECTED
    assert list(iter_sse([body[:40], body[40:]])) == EXPECTED
    assert pattern.splits == 0
    cut_in_crlf = body.index(b"\r\n") + 1
    assert list(iter_sse([body[:cut_in_crlf], body[cut_in_crlf:]])) == EXPECTED
    assert list(iter_sse([LF_BODY.replace(b"\n", b"\r")])) == EXPECTED
    assert pattern.splits == 2
