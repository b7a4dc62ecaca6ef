"""Issue 34 item 4: the SSE reader splits a chunk of CRLF lines (Gemini's event stream) at ``"\\r\\n"`` at once,
without first copying it with LF line ends (``str.replace`` over a whole network chunk cost about 0.6 µs an event
of Gemini's stream); a chunk holding a lone CR or LF besides is split by the pattern, as before. (Its leading
events of one ``data:`` line each are split at their blank lines first: test_item_4_stream_data_blocks.py.)"""

from __future__ import annotations

import re
from typing import Any

import pytest

from llmplex.http import ServerSentEvent, SSEDecoder
from llmplex.http import sse as sse_module

CRLF_BODY = b'data: {"text": "Hel"}\r\n\r\nevent: delta\r\ndata: one\r\ndata: two\r\n\r\ndata: last\r\n\r\n'
EXPECTED = [
    ServerSentEvent('{"text": "Hel"}'),
    ServerSentEvent("one\ntwo", "delta"),
    ServerSentEvent("last"),
]


class _Text(str):
    """Decoded text that notes the methods called on it."""

    __slots__ = ()
    called: list[str] = []

    def replace(self, *args: Any, **kwargs: Any) -> str:
        self.called.append("replace")
        return super().replace(*args, **kwargs)

    def split(self, *args: Any, **kwargs: Any) -> list[str]:
        self.called.append(f"split {args[0]!r}")
        return super().split(*args, **kwargs)

    def __getitem__(self, key: Any) -> str:  # a slice of it (what is left after whole events) notes its calls too
        return _Text(super().__getitem__(key))


class _Decoder:
    """An incremental UTF-8 decoder handing out ``_Text``."""

    def decode(self, chunk: bytes) -> str:
        return _Text(chunk.decode())


def _read(chunks: list[bytes]) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    decoder._text = _Decoder()  # type: ignore[assignment]
    decoder._started = True  # no byte order mark to drop (dropping it would make the text a plain str)
    return list(decoder.read(chunks))


@pytest.fixture
def called() -> list[str]:
    _Text.called = []
    return _Text.called


class _Pattern:
    """``_LINE_END`` that counts its splits."""

    def __init__(self) -> None:
        self.splits = 0

    def split(self, text: str) -> list[str]:
        self.splits += 1
        return re.split(r"\r\n|\r|\n", text)


@pytest.fixture
def pattern(monkeypatch: pytest.MonkeyPatch) -> _Pattern:
    counting = _Pattern()
    monkeypatch.setattr(sse_module, "_LINE_END", counting)
    return counting


def test_item_4_crlf_chunk_is_split_once_without_a_copy(called: list[str], pattern: _Pattern) -> None:
    assert _read([CRLF_BODY]) == EXPECTED
    assert called == ["split '\\r\\n\\r\\n'", "split '\\r\\n'"] and pattern.splits == 0


@pytest.mark.parametrize(
    "body",
    [
        CRLF_BODY.replace(b"data: one\r\n", b"data: one\r"),
        CRLF_BODY.replace(b"data: one\r\n", b"data: one\n"),
        CRLF_BODY + b"data: cut\r",
    ],
    ids=["lone CR", "lone LF", "ends with a CR"],
)
def test_item_4_a_lone_cr_or_lf_still_goes_to_the_pattern(body: bytes, called: list[str], pattern: _Pattern) -> None:
    assert _read([body]) == EXPECTED
    assert called == ["split '\\r\\n\\r\\n'", "split '\\r\\n'"] and pattern.splits == 1
