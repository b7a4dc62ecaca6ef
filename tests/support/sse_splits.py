"""Reading an SSE stream while noting how the reader split its text: what the tests of the SSE reader's whole-event
paths (issue 34 item 4: named events, data events) share."""

from __future__ import annotations

from typing import Any

from llmplex.http import ServerSentEvent, SSEDecoder


class _Text(str):
    """Decoded text that notes its splits (a slice of it too)."""

    __slots__ = ()
    splits: list[str] = []

    def split(self, *args: Any, **kwargs: Any) -> list[str]:
        self.splits.append(args[0])
        return super().split(*args, **kwargs)

    def __getitem__(self, key: Any) -> str:
        return _Text(super().__getitem__(key))


class _Decoder:
    def decode(self, chunk: bytes) -> str:
        return _Text(chunk.decode())


def read_noting_splits(chunks: list[bytes]) -> tuple[list[ServerSentEvent], list[str]]:
    """The events of ``chunks`` and the separators the reader split their text at, in order."""
    _Text.splits = []
    decoder = SSEDecoder()
    decoder._text = _Decoder()  # type: ignore[assignment]
    decoder._started = True  # no byte order mark to drop (dropping it would make the text a plain str)
    return list(decoder.read(chunks)), _Text.splits
