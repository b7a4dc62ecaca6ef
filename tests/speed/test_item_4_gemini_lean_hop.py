"""Issue 34 item 4: llmplex-gemini's lean stream records each common plain chunk on its request's ``Hop`` in its own
loop (the usage so far, the latest finish reason, a token let go of) instead of a call to ``Hop.observe`` a chunk,
with the same record; a request that got no continuation token does not ask the SDK whether it may resume; and the
parser reads a part that is text and nothing else by its text alone."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from google.genai import _extra_utils
from llmplex_gemini import continuation
from llmplex_gemini import lean as gemini_lean
from llmplex_gemini.streaming import parse_chunk

from llmplex.types import Request, StreamState
from tests.plugins.gemini.wire import MODEL, response, stream_body, text_part, usage
from tests.speed.gemini_payloads import TURN

SAFETY = [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}]
CHUNKS = [
    response([text_part("Hel")], finish_reason=None, usage_metadata=usage(5, 1)),
    response([text_part("lo")], finish_reason=None),
    response([text_part(" there")], finish_reason="CONTINUATION", usage_metadata=usage(5, 3)),
    response([text_part("!")], finish_reason=None, usage_metadata=usage(5, 4), safety_ratings=SAFETY),
    response([text_part("?")], finish_reason="STOP", usage_metadata=usage(5, 5)),
]


class _Response:
    """The part of ``httpx2.Response`` the lean reader uses: the body in two pieces, sync and async."""

    headers: dict[str, str] = {"content-type": "text/event-stream"}

    def __init__(self, body: bytes) -> None:
        self.pieces = [body[:100], body[100:]]

    def iter_bytes(self) -> Iterator[bytes]:
        return iter(self.pieces)

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> list[continuation.Hop]:
    """Every ``Hop`` the lean reader makes, and the chunks its ``observe`` was handed (``hop.observed``)."""
    made: list[continuation.Hop] = []

    class Counted(continuation.Hop):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.observed: list[Any] = []
            made.append(self)

        def observe(self, chunk: Any) -> Any:
            self.observed.append(chunk)
            return super().observe(chunk)

    monkeypatch.setattr(continuation, "Hop", Counted)
    return made


def _read(is_async: bool) -> list[Any]:
    stream = gemini_lean.LeanStream(SimpleNamespace(continues=True, arguments={"model": MODEL, "contents": TURN}))  # type: ignore[arg-type]
    reply = _Response(stream_body(CHUNKS))
    if not is_async:
        return list(stream._chunks(reply))  # type: ignore[arg-type]

    async def read() -> list[Any]:
        return [chunk async for chunk in stream._achunks(reply)]  # type: ignore[arg-type]

    return asyncio.run(read())


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_item_4_gemini_plain_chunks_are_recorded_without_observe(is_async: bool, hops: list[Any]) -> None:
    chunks = _read(is_async)
    assert [type(chunk) for chunk in chunks] == [tuple, tuple, tuple, type(chunks[3]), tuple]  # chunks.TextChunk
    assert type(chunks[3]) is not tuple  # safety ratings: the SDK's model, observed as before
    (hop,) = hops
    assert [type(chunk) for chunk in hop.observed] == [type(chunks[3])]
    expected = continuation.Hop(True)  # what observe records of each chunk as it came (a text chunk: its dict)
    for chunk, sent in zip(chunks, CHUNKS, strict=True):
        continuation.Hop.observe(expected, sent if type(chunk) is tuple else chunk)
    fields = [field.name for field in dataclasses.fields(continuation.Hop)]
    assert [getattr(hop, name) for name in fields] == [getattr(expected, name) for name in fields]
    assert hop.finish == "STOP" and hop.usage == CHUNKS[-1]["usageMetadata"] and hop.token is None


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_item_4_gemini_no_token_asks_nothing_about_resuming(
    is_async: bool, hops: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[Any] = []
    resume = _extra_utils.can_resume_stream
    monkeypatch.setattr(_extra_utils, "can_resume_stream", lambda *args: (asked.append(args), resume(*args))[1])
    assert len(_read(is_async)) == len(CHUNKS)
    assert asked == []


class _Part(dict[str, Any]):
    """A part that notes the keys asked of it."""

    asked: list[str]

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.append(key)
        return super().get(key, default)


def test_item_4_gemini_text_part_is_read_by_its_text_alone() -> None:
    part = _Part(text_part("Hi"))
    part.asked = []
    thought = _Part(text_part("hm", thought=True))
    thought.asked = []
    state = StreamState(Request(model=MODEL, messages=[{"role": "user", "content": "hi"}]))
    candidate = {"content": {"parts": [part, thought], "role": "model"}, "index": 0}
    chunk = {"candidates": [candidate], "modelVersion": MODEL}
    events = parse_chunk(chunk, state)
    assert [(event.type, event.text) for event in events] == [("text", "Hi")]
    assert part.asked == ["text"]
    assert "thought" in thought.asked  # any other part is read in full
