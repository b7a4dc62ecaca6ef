"""Server-sent events (``text/event-stream``) read from a response's bytes, as the WHATWG spec says.

    from llmplex.http import iter_sse

    for event in iter_sse(response.iter_bytes()):   # aiter_sse(response.aiter_bytes()) when async
        if event.data != "[DONE]":
            yield event.json()

Chunks may split the stream anywhere (inside a UTF-8 sequence, between CR and
LF); lines end with CRLF, LF or CR; a leading byte order mark is dropped;
``:`` comment lines are skipped; ``data:`` lines of one event are joined with
``\\n``; ``event``, ``id`` and ``retry`` are read; a block without ``data`` is not
an event. An event whose blank line never came (the stream was cut) is
discarded, as the spec says, so a truncated JSON payload is never handed on.
An event (its data and the line being read) longer than ``max_event_bytes`` is
``LLMServerError``: a server that never ends an event cannot fill the memory
before the deadline ends the call.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any, NamedTuple

from llmplex.errors import LLMConfigurationError, LLMServerError

__all__ = ["MAX_EVENT_BYTES", "SSEDecoder", "ServerSentEvent", "aiter_sse", "iter_sse"]

MAX_EVENT_BYTES = 64 * 1024 * 1024
"""The default bound on one event's size: its ``data`` lines and the line being read, in bytes."""

_tuple_new = tuple.__new__
"""Makes a ``ServerSentEvent`` from its four fields without the named tuple's ``__new__`` (a Python function)."""
_BOM = "\ufeff"
_LINE_END = re.compile(r"\r\n|\r|\n")
_EVENT = re.compile(r"event: ([^\n]*)\ndata: ([^\n]*)\n\n")
"""A named event of one ``data`` line (LF line ends), as Anthropic's and OpenAI's Responses streams send them."""


class ServerSentEvent(NamedTuple):
    """One event: its ``data`` (lines joined with ``\\n``), type, last event id and reconnection time.

    ``event`` is ``"message"`` unless the stream named it; ``id`` is the last
    event id the stream set (it carries over to later events, ``""`` if never
    set); ``retry`` is the last reconnection time in milliseconds the stream
    gave (``None`` if never). Immutable (a named tuple: one is made per event, so it is cheap to make).
    """

    data: str
    event: str = "message"
    id: str = ""
    retry: int | None = None

    def json(self) -> Any:
        """``data`` parsed as JSON (raises ``ValueError`` when it is not JSON)."""
        return json.loads(self.data)


class SSEDecoder:
    """An incremental event-stream parser: ``feed`` it bytes as they come, get the complete events back.

    It holds at most ``max_event_bytes`` of one event (data lines and the unfinished line).
    """

    def __init__(self, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        if isinstance(max_event_bytes, bool) or not isinstance(max_event_bytes, int) or max_event_bytes < 1:
            raise LLMConfigurationError(f"max_event_bytes must be a whole number >= 1, got {max_event_bytes!r}")
        self.max_event_bytes = max_event_bytes
        self._held = 0  # bytes (at most) of the unfinished line and the event's data so far
        self._text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._started = False
        self._after_cr = False
        self._line: list[str] = []
        self._data: list[str] = []
        self._measured: tuple[list[str], int, int] = (self._data, 0, 0)  # a data list, its lines sized, their bytes
        self._event = ""
        self._id = ""
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events completed by ``chunk`` (bytes in any split), in order."""
        return list(self.events(chunk))

    def events(self, chunk: bytes) -> Iterator[ServerSentEvent]:
        """``feed`` lazily: each event as soon as its blank line is read, not after the whole chunk is.

        A chunk that holds a whole streamed answer gives its first event without reading the rest;
        run it to its end before feeding the next chunk.
        """
        return self.read((chunk,))

    def read(self, chunks: Iterable[bytes]) -> Iterator[ServerSentEvent]:  # noqa: PLR0915 - one generator
        """The events of ``chunks``, each as soon as its blank line is read (one generator for the chunks, their
        whole events and their lines: this loop runs for every line of a stream, and a helper generator for the whole
        events cost 0.1 us a chunk of Gemini's stream)."""
        for chunk in chunks:
            text = self._text.decode(chunk)
            if self._after_cr or not self._started:
                text = self._leading(text)
            if not text:
                continue
            self._after_cr = text.endswith("\r")
            if "\r" not in text:
                if text[0] == "e" and not (self._line or self._data or self._event):
                    # at an event's start: the named events of one data line each read whole, by the pattern
                    start, match = 0, _EVENT.match
                    while (found := match(text, start)) is not None:
                        start = found.end()
                        yield _tuple_new(ServerSentEvent, (found[2], found[1] or "message", self._id, self._retry))
                    if start == len(text):  # the chunk ended with an event
                        continue
                    if start:  # the rest, by lines from the last event's blank line (held exactly as by lines)
                        text = text[start - 1 :]
                lines = text.split("\n")
            else:  # CRLF only (Gemini's): split at once, no regular expression (nor a copy with LF line ends)
                if text[0] == "d" and not (self._line or self._data or self._event):
                    # at an event's start: the events of one data line each read whole, the chunk split into blocks
                    start, blocks = 0, text.split("\r\n\r\n")
                    blocks.pop()  # the unfinished event (or "")
                    for block in blocks:
                        if not block.startswith("data: ") or "\r" in block or "\n" in block:
                            break
                        start += len(block) + 4
                        yield _tuple_new(ServerSentEvent, (block[6:], "message", self._id, self._retry))
                    if start == len(text):  # the chunk ended with an event
                        continue
                    if start:  # the rest, by lines from the last event's blank line (held exactly as by lines)
                        text = text[start - 2 :]
                lines = text.split("\r\n")
                if "\r" in (rest := "".join(lines)) or "\n" in rest:  # a lone CR or LF besides
                    lines = _LINE_END.split(text)
            if len(lines) == 1:  # a part of a line
                self._line.append(text)
                self._held += len(chunk)
                if self._held > self.max_event_bytes:
                    raise self._too_large()
                continue
            if self._line:
                lines[0] = "".join(self._line) + lines[0]
            last = lines.pop()
            self._line = [last] if last else []
            for line in lines:  # runs for every line: the common ones parsed here, the rest by ``_field``
                if not line:
                    event, self._event = self._event, ""
                    if data := self._data:  # (a block without data is not an event)
                        self._data = []
                        joined = data[0] if len(data) == 1 else "\n".join(data)
                        yield _tuple_new(ServerSentEvent, (joined, event or "message", self._id, self._retry))
                elif line.startswith("data: "):
                    self._data.append(line[6:])
                elif line.startswith("event: "):
                    self._event = line[7:]
                else:
                    self._field(line)
            self._held = len(last) + (self._data_size() if self._data else 0)
            if self._held > self.max_event_bytes:
                raise self._too_large()

    def _leading(self, text: str) -> str:
        """``text`` without what leads it and belongs to no line: the stream's byte order mark, or the LF of a
        CRLF split across chunks."""
        if text and not self._started:
            self._started = True
            text = text.removeprefix(_BOM)
        if text and self._after_cr:
            self._after_cr = False
            if text[0] == "\n":
                text = text[1:]
        return text

    def _data_size(self) -> int:
        """The size of the event's data lines so far: only the lines added since the last look are measured (an
        event of many lines sent in many chunks costs linear time, not quadratic)."""
        data = self._data
        measured, counted, size = self._measured
        if measured is not data:  # an event ended since: a new list
            counted = size = 0
        if counted < len(data):
            size += sum(map(len, data[counted:])) + len(data) - counted
            self._measured = (data, len(data), size)
        return size

    def _too_large(self) -> LLMServerError:
        self._line, self._data, self._held = [], [], 0
        return LLMServerError(
            f"the event stream sent an event longer than {self.max_event_bytes} bytes without ending it "
            "(no blank line): the server is broken, or raise max_event_bytes if its events are that large"
        )

    def _field(self, line: str) -> None:
        """Any other line: a field (``id`` and ``retry`` are kept, ``data`` and ``event`` written without their
        space), or a comment (empty name) or an unknown field, ignored."""
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)


def iter_sse(chunks: Iterable[bytes], max_event_bytes: int = MAX_EVENT_BYTES) -> Iterator[ServerSentEvent]:
    """The events of an event stream given as bytes (``response.iter_bytes()``, a file, a list)."""
    return SSEDecoder(max_event_bytes).read(chunks)


async def aiter_sse(
    chunks: AsyncIterable[bytes], max_event_bytes: int = MAX_EVENT_BYTES
) -> AsyncIterator[ServerSentEvent]:
    """Async twin of ``iter_sse`` (``response.aiter_bytes()``)."""
    decoder = SSEDecoder(max_event_bytes)
    async for chunk in chunks:
        for event in decoder.events(chunk):
            yield event
