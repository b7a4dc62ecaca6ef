"""Issue 34 items 4 and 5: a direct stream (``llmplex.http.direct_stream``, llmplex-openai's and llmplex-anthropic's
async lean streams) awaits each read of its body in ``aiter_bytes`` itself, not in a coroutine of its own a chunk,
with or without a deadline; the chunks, the connection's release at the end and a failed read's error are as
before (the deadline's ``ReadTimeout`` and the transport's errors: tests/speed/test_item_5_direct_stream.py)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import httpx
import pytest

from llmplex.http.direct_stream import DirectStream
from llmplex.reliability.deadline import Deadline

CHUNKS = [b"data: {}\n\n", b"data: [DONE]\n\n"]


class _Content:
    def __init__(self, chunks: list[bytes], fail: Exception | None = None) -> None:
        self.chunks = iter(chunks)
        self.fail = fail
        self.readers: list[str] = []

    async def readany(self) -> bytes:
        caller = inspect.currentframe()
        self.readers.append(caller.f_back.f_code.co_name if caller and caller.f_back else "")
        chunk = next(self.chunks, b"")
        if not chunk and self.fail is not None:
            raise self.fail
        return chunk


class _Response:
    def __init__(self, content: _Content) -> None:
        self.content = content
        self.status = 200
        self.headers: dict[str, str] = {}
        self.closed = False
        self.released = 0

    def release(self) -> None:
        self.released += 1
        self.closed = True

    def close(self) -> None:
        self.closed = True


class _Sender:
    library = httpx

    def raise_mapped(self, error: Exception, request: Any) -> None:
        raise httpx.ReadError(str(error), request=request()) from error


def _read(response: _Response, deadline: Deadline | None) -> list[bytes]:
    stream = DirectStream(_Sender(), response, deadline, lambda: httpx.Request("POST", "http://x"))  # type: ignore[arg-type]

    async def read() -> list[bytes]:
        return [chunk async for chunk in stream.aiter_bytes()]

    return asyncio.run(read())


@pytest.mark.parametrize("deadline", [None, 60.0])
def test_item_4_a_direct_stream_awaits_each_read_itself(deadline: float | None) -> None:
    content = _Content(CHUNKS)
    response = _Response(content)
    chunks = _read(response, None if deadline is None else Deadline.after(deadline))
    assert chunks == CHUNKS
    assert content.readers == ["aiter_bytes"] * 3
    assert response.released == 1


def test_item_4_a_direct_streams_failed_read_is_mapped_and_not_released() -> None:
    response = _Response(_Content(CHUNKS[:1], fail=ConnectionResetError("reset")))
    with pytest.raises(httpx.ReadError, match="reset"):
        _read(response, None)
    assert response.released == 0
