"""Issue 34 item 4: an event stream's header blocks (one per event type, the same in every Bedrock stream) are
parsed by botocore's header parser once for all streams and threads, not once per stream: a stream's first
events cost no header parsing after the first stream. The messages read stay botocore's buffer's, a server
sending a new block with every message still gets each parsed, and the shared cache stays bounded."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer, EventStreamHeaderParser
from llmplex_bedrock import frames as bedrock_frames

from tests.plugins.bedrock.wire import event_frame, exception_frame, frame

STREAM = [
    event_frame("messageStart", {"role": "assistant"}),
    *(event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}}) for t in "Hi there"),
    event_frame("contentBlockStop", {"contentBlockIndex": 0}),
    event_frame("messageStop", {"stopReason": "end_turn"}),
    exception_frame("throttlingException", "slow down"),
]
BLOCKS = 5
"""Distinct header blocks in ``STREAM``: four event types and the exception."""


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Each header block botocore's parser is given, the shared cache emptied first."""
    monkeypatch.setattr(bedrock_frames, "_KNOWN", {})
    blocks: list[bytes] = []
    parse = EventStreamHeaderParser.parse

    def counted(self: EventStreamHeaderParser, data: bytes) -> Any:
        blocks.append(data)
        return parse(self, data)

    monkeypatch.setattr(EventStreamHeaderParser, "parse", counted)
    return blocks


def _lean(chunks: list[bytes]) -> list[tuple[dict[str, Any], bytes]]:
    reader = bedrock_frames.FrameReader()
    return [message for chunk in chunks for message in reader.feed(chunk)]


def _botocores(chunks: list[bytes]) -> Iterator[tuple[dict[str, Any], bytes]]:
    buffer = EventStreamBuffer()
    for chunk in chunks:
        buffer.add_data(chunk)
        for message in buffer:
            yield message.headers, message.payload  # type: ignore[misc]


def test_item_4_bedrock_header_blocks_parsed_once_across_streams(parsed: list[bytes]) -> None:
    """Ten streams, read one after another and then from four threads at once: each distinct header block is
    parsed once in all (``BLOCKS``), and every stream's messages are botocore's buffer's."""
    expected = list(_botocores(STREAM))
    parsed.clear()
    for _ in range(10):
        assert _lean(STREAM) == expected
    assert len(parsed) == BLOCKS == len(set(parsed))
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(_lean([b"".join(STREAM)]))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4 and len(parsed) == BLOCKS


def test_item_4_bedrock_shared_header_cache_survives_a_server_inventing_blocks(parsed: list[bytes]) -> None:
    """A stream with a new header block in every message (more than the cache holds) is read right, each block
    parsed; the cache stays bounded, and the streams after it are read right too."""
    inventive = [frame({":event-type": "messageStart", "n": str(i)}, b"{}") for i in range(150)]
    assert [headers["n"] for headers, _ in _lean(inventive)] == [str(i) for i in range(150)]
    assert len(parsed) == 150 and len(bedrock_frames._KNOWN) <= bedrock_frames._CACHED_HEADERS
    assert _lean(STREAM) == list(_botocores(STREAM))
