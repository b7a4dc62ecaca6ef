"""``application/vnd.amazon.eventstream`` frames read as botocore's ``EventStreamBuffer`` reads them, with less work.

botocore's buffer unpacks each header of each message field by field and copies
what is left of its buffer after every message. ``FrameReader`` checks the same
things in the same order (the prelude's CRC, the header and payload length
limits, the message CRC seeded with the prelude's), keeps an offset instead of
copying, joins a frame's chunks once the frame is whole (botocore's buffer
copies itself with every chunk: quadratic in a big frame), and parses a
message's header bytes with botocore's own header parser once per distinct
value, kept across streams (every stream repeats the same few: one per event
type; the parsed headers are only read, never changed). At the
first message that is anything but well formed (a CRC that does not match, a
length over botocore's limits, lengths that contradict each other) the bytes
from that message on go to a real ``EventStreamBuffer``, which raises its own
error (``ChecksumMismatch``, ``InvalidPayloadLength``...) as it always did.
"""

from __future__ import annotations

from binascii import crc32
from collections.abc import Generator, Iterator
from struct import Struct
from typing import Any

from botocore.eventstream import EventStreamBuffer, EventStreamHeaderParser

__all__ = ["FrameReader"]

_PRELUDE = Struct("!III")
_CRC = Struct("!I")
_MAX_HEADERS = 128 * 1024
_MAX_PAYLOAD = 24 * 1024 * 1024
"""botocore's limits (``_MAX_HEADERS_LENGTH``, ``_MAX_PAYLOAD_LENGTH``); a message past them goes to its buffer."""
_CACHED_HEADERS = 64
"""Distinct header blocks remembered (a server sending new ones each time gets them parsed: the cache starts again
when full)."""
_KNOWN: dict[bytes, dict[str, Any]] = {}
"""Parsed header blocks, shared by every stream and thread (a dict's get and set are atomic)."""


class FrameReader:
    """The messages of one event stream, fed chunk by chunk: ``(headers, payload)`` pairs."""

    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self._size = 0
        self._need = 12
        """Bytes pending before a read can give a message: a prelude's, or the whole of the frame it announces."""
        self._fallback: EventStreamBuffer | None = None

    def feed(self, chunk: bytes) -> Iterator[tuple[dict[str, Any], bytes]]:
        """The messages ``chunk`` completes (read them all before feeding the next chunk)."""
        if self._fallback is None:
            self._pending.append(chunk)
            self._size += len(chunk)
            if self._size < self._need:  # a frame's bytes are joined once it is whole, not once per chunk
                return
            data = b"".join(self._pending)
            start = yield from self._messages(data)
            if start is None:
                return
            self._fallback = EventStreamBuffer()
            self._fallback.add_data(data[start:])
        else:
            self._fallback.add_data(chunk)
        for message in self._fallback:
            headers: Any = message.headers  # a dict; botocore's stubs type it as the header-length int
            yield headers, message.payload

    def _messages(self, data: bytes) -> Generator[tuple[dict[str, Any], bytes], None, int | None]:
        """The well-formed messages of ``data``; returns where botocore's buffer must take over (``None``: nowhere,
        the rest kept for the next chunk)."""
        start, size = 0, len(data)
        while size - start >= 12:
            total, length, prelude_crc = _PRELUDE.unpack_from(data, start)
            headers_end, payload_end = start + 12 + length, start + total - 4
            if (
                crc32(data[start : start + 8]) != prelude_crc
                or length > _MAX_HEADERS
                or total - length - 16 > _MAX_PAYLOAD
                or headers_end > payload_end
            ):
                return start
            if size - start < total:
                self._need = total
                break
            if crc32(data[start + 8 : payload_end], prelude_crc) != _CRC.unpack_from(data, payload_end)[0]:
                return start
            block = data[start + 12 : headers_end]
            headers = _KNOWN.get(block)
            if headers is None:
                headers = _parse(block)
            yield headers, data[headers_end:payload_end]
            start += total
        else:
            self._need = 12
        rest = data[start:]
        self._pending, self._size = [rest], len(rest)
        return None


def _parse(block: bytes) -> dict[str, Any]:
    """botocore's reading of a message's header bytes, kept in ``_KNOWN``."""
    headers: dict[str, Any] = EventStreamHeaderParser().parse(block)
    if len(_KNOWN) >= _CACHED_HEADERS:
        _KNOWN.clear()
    _KNOWN[block] = headers
    return headers
