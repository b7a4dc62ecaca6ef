"""Issue 26 item 7: the SSE decoder's buffer is bounded in bytes as well as by the deadline."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Iterator

import pytest

from llmplex.errors import LLMConfigurationError, LLMServerError
from llmplex.http import SSEDecoder, aiter_sse, iter_sse
from llmplex.http import sse as sse_module
from llmplex.http.sse import MAX_EVENT_BYTES


def _endless_line(chunk: bytes, count: int) -> Iterator[bytes]:
    yield b"data: "
    for _ in range(count):
        yield chunk


def test_item_7_a_line_that_never_ends_fails_at_the_bound_not_at_memory() -> None:
    fed = 0

    def chunks() -> Iterator[bytes]:
        nonlocal fed
        for chunk in _endless_line(b"x" * 1024, 10_000):
            fed += len(chunk)
            yield chunk

    with pytest.raises(LLMServerError, match=r"longer than 65536 bytes without ending it"):
        list(iter_sse(chunks(), max_event_bytes=65536))
    assert fed <= 65536 + 2048  # stopped within one chunk of the bound


def test_item_7_many_data_lines_without_a_blank_line_fail_at_the_bound() -> None:
    decoder = SSEDecoder(max_event_bytes=10_000)
    line = b"data: " + b"y" * 100 + b"\n"
    for _ in range(99):  # 99 data lines of 101 bytes held: 9999
        assert decoder.feed(line) == []
    with pytest.raises(LLMServerError, match="without ending it"):
        decoder.feed(line)
    assert decoder._data == [] and decoder._line == []  # what it held is dropped


def test_item_7_an_event_of_many_lines_in_many_chunks_is_sized_in_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hostile server sending one ``data:`` line per network chunk: each line is sized once, not once per chunk
    for every line before it (which made 80,000 such chunks cost 40 s of CPU)."""
    sized = 0

    def counting_sum(values: Iterable[int]) -> int:
        nonlocal sized
        items = list(values)
        sized += len(items)
        return sum(items)

    monkeypatch.setattr(sse_module, "sum", counting_sum, raising=False)
    decoder = SSEDecoder(max_event_bytes=10_000_000)
    for _ in range(5000):
        assert decoder.feed(b"data: x\n") == []
    assert sized == 5000
    (event,) = decoder.feed(b"\n")
    assert event.data == "\n".join(["x"] * 5000)


def test_item_7_the_next_event_is_sized_from_zero() -> None:
    decoder = SSEDecoder(max_event_bytes=1010)
    line = b"data: " + b"y" * 100 + b"\n"
    for _ in range(3):
        for _ in range(10):  # 10 lines of 101 bytes: 1010, at the bound
            assert decoder.feed(line) == []
        assert [len(e.data) for e in decoder.feed(b"\n")] == [10 * 100 + 9]
    for _ in range(10):
        decoder.feed(line)
    with pytest.raises(LLMServerError, match="without ending it"):
        decoder.feed(line)


def test_item_7_multibyte_text_counts_in_bytes_and_one_chunk_holding_it_all_fails_too() -> None:
    with pytest.raises(LLMServerError):
        SSEDecoder(max_event_bytes=1000).feed(b"data: " + "\u00e9".encode() * 600)  # 1200 bytes, 600 characters
    with pytest.raises(LLMServerError):
        SSEDecoder(max_event_bytes=1000).feed(b"data: " + b"z" * 2000 + b"\n")


def test_item_7_events_under_the_bound_pass_however_many_arrive() -> None:
    """The bound is per event: a long stream of small events, and comments between, never trips it."""
    stream = (b": keep-alive\n" + b"data: " + b"a" * 500 + b"\n\n") * 2000  # about 1 MB in all
    events = list(iter_sse([stream[i : i + 4096] for i in range(0, len(stream), 4096)], max_event_bytes=2048))
    assert len(events) == 2000 and all(len(e.data) == 500 for e in events)
    (one,) = list(iter_sse([b"data: " + b"b" * 900 + b"\n\n"], max_event_bytes=1000))
    assert len(one.data) == 900
    assert MAX_EVENT_BYTES >= 16 * 1024 * 1024  # the default leaves room for large image events


def test_item_7_async_reader_is_bounded_too() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for chunk in _endless_line(b"q" * 512, 100_000):
            yield chunk

    async def read() -> None:
        async for _ in aiter_sse(chunks(), max_event_bytes=4096):
            pass

    with pytest.raises(LLMServerError, match="4096 bytes"):
        asyncio.run(read())


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "10"])
def test_item_7_a_wrong_bound_is_a_typed_error(bad: object) -> None:
    with pytest.raises(LLMConfigurationError, match="max_event_bytes must be a whole number"):
        SSEDecoder(max_event_bytes=bad)  # type: ignore[arg-type]
