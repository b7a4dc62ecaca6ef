"""Issue 34 item 4: llmplex-gemini's lean stream walks a common text chunk once.

The lean reader reads a decoded text chunk in one walk (``chunks.text_chunk``: the plain-chunk check, its text events
built as it goes) and hands that reading on (``chunks.TextChunk``); the request's continuation record takes its usage
and finish reason from it, and ``parse_chunk`` keeps the rest in the stream's state without asking the decoded chunk
anything again. The events, the usage so far and the state are those of the plain ``dict`` the reader handed on
before; a chunk the walk leaves (two candidates, a function call) is still handed on as the plain ``dict``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from llmplex_gemini import chunks
from llmplex_gemini import lean as gemini_lean
from llmplex_gemini.streaming import parse_chunk

from llmplex.errors import LLMRefusalError
from llmplex.types import Request, StreamState
from tests.plugins.gemini.wire import MODEL, function_call_part, response, stream_body, text_part, usage
from tests.speed.gemini_payloads import TURN

REQUEST = Request(model=MODEL, messages=[{"role": "user", "content": "hi"}])
CHUNKS = [
    response([text_part("Hel")], finish_reason=None, usage_metadata=usage(5, 1)),
    response([text_part("lo"), text_part("hm", thought=True)], finish_reason=None, usage_metadata=usage(5, 2)),
    response([text_part(""), {"text": " the", "thought": False}], finish_reason=None),
    response([text_part("re")], finish_reason="STOP", usage_metadata=usage(5, 4, thoughts=1)),
]


class _Response:
    """The part of ``httpx2.Response`` the lean reader uses: the body, sync and async."""

    headers: dict[str, str] = {"content-type": "text/event-stream"}

    def __init__(self, body: bytes) -> None:
        self.body = body

    def iter_bytes(self) -> Iterator[bytes]:
        return iter([self.body])

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        yield self.body

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


def _nested(value: Any) -> Iterator[Any]:
    yield value
    for item in value.values() if type(value) is dict else value if type(value) is list else ():
        yield from _nested(item)


@contextmanager
def _asked(decoded: list[Any]) -> Iterator[list[str]]:
    """The keys asked (``get``) of any object of the decoded chunks (``decoded``, growing as they are decoded)."""
    asked: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call" and getattr(arg, "__name__", "") == "get":
            owner = getattr(arg, "__self__", None)
            if any(owner is item for chunk in decoded for item in _nested(chunk)):
                asked.append("get")

    sys.setprofile(profile)
    try:
        yield asked
    finally:
        sys.setprofile(None)


def _read(body: bytes, is_async: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[Any], list[str]]:
    """What the lean reader hands on, the chunks it decoded, and the keys it asked of them."""
    decoded: list[Any] = []
    monkeypatch.setattr(gemini_lean, "_loads", lambda data: (decoded.append(value := orjson.loads(data)), value)[1])
    stream = gemini_lean.LeanStream(SimpleNamespace(continues=True, arguments={"model": MODEL, "contents": TURN}))  # type: ignore[arg-type]
    reply = _Response(body)

    def sync() -> list[Any]:
        return list(stream._chunks(reply))  # type: ignore[arg-type]

    async def read() -> list[Any]:
        return [chunk async for chunk in stream._achunks(reply)]  # type: ignore[arg-type]

    with _asked(decoded) as asked:
        handed = asyncio.run(read()) if is_async else sync()
    return handed, decoded, asked


def _parsed(handed: list[Any]) -> tuple[list[Any], StreamState]:
    state = StreamState(REQUEST)
    return [parse_chunk(chunk, state) for chunk in handed], state


def _walked(decoded: list[Any]) -> int:
    """How many keys the one walk asks of the decoded chunks."""
    with _asked(decoded) as asked:
        for chunk in decoded:
            chunks.text_chunk(chunk)
    return len(asked)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_item_4_gemini_text_chunks_are_walked_once(is_async: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader asks each decoded chunk only what its one walk asks; the parser asks a chunk nothing (the finish
    reason's usage event and reasoning, at the turn's end, read the latest usage and the turn's parts)."""
    handed, decoded, asked = _read(stream_body(CHUNKS), is_async, monkeypatch)
    assert decoded == CHUNKS and all(type(chunk) is tuple for chunk in handed)
    assert len(asked) == _walked(decoded)  # the continuation record reads the walk's usage and finish reason
    with _asked(decoded) as by_parser:
        _parsed(handed[:-1])
    assert by_parser == []


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_item_4_gemini_text_chunk_events_and_state_are_the_plain_dicts(
    is_async: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text events, the usage so far, the turn's parts and its reasoning, and the finish: as parsed from the
    plain ``dict`` of each chunk."""
    handed, decoded, _ = _read(stream_body(CHUNKS), is_async, monkeypatch)
    got, state = _parsed(handed)
    expected, expected_state = _parsed(decoded)
    assert got == expected
    assert [[event.model_fields_set for event in events] for events in got] == [
        [event.model_fields_set for event in events] for events in expected
    ]
    assert [event.type for event in got[-1]] == ["text", "usage", "reasoning", "finish"]
    assert state.data == expected_state.data and state.usage_so_far is expected_state.usage_so_far is None


@pytest.mark.parametrize(
    "chunk",
    [
        {**CHUNKS[0], "candidates": [CHUNKS[0]["candidates"][0], {**CHUNKS[1]["candidates"][0], "index": 1}]},
        response([function_call_part("get_weather", {"city": "Paris"}, "c1")], finish_reason=None),
    ],
    ids=["two candidates", "a function call"],
)
def test_item_4_gemini_chunk_the_walk_leaves_is_the_plain_dict(
    chunk: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert chunks.text_chunk(chunk) is None and chunks.is_plain(chunk)
    handed, decoded, _ = _read(stream_body([chunk]), False, monkeypatch)
    assert [type(item) for item in handed] == [dict] and handed == decoded == [chunk]


@pytest.mark.parametrize("refused", ["SAFETY", "PROHIBITED_CONTENT"])
def test_item_4_gemini_text_chunk_block_is_refused_as_the_dicts(refused: str) -> None:
    """A finish reason that is a block raises the same refusal, read or plain, before the state holds anything."""
    chunk = response([text_part("x")], finish_reason=refused, usage_metadata=usage(5, 1))
    chunk["candidates"][0]["finishMessage"] = "withheld"
    errors: list[tuple[type, str, str | None]] = []
    for handed in (chunks.text_chunk(chunk), chunk):
        state = StreamState(REQUEST)
        with pytest.raises(LLMRefusalError, match="withheld") as caught:
            parse_chunk(handed, state)
        errors.append((type(caught.value), str(caught.value), caught.value.refusal))
        assert state.data == {} and state.usage_so_far is None
    assert errors[0] == errors[1]


def test_item_4_gemini_plain_check_of_a_whole_answer_builds_no_event() -> None:
    """``is_plain`` (a whole answer's check, and a chunk the walk left) walks as the stream does, but makes no text
    event of what it reads."""
    answer = response([text_part("Hello"), text_part(" there")], finish_reason="STOP", usage_metadata=usage(5, 2))
    called: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            called.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        plain = chunks.is_plain(answer)
    finally:
        sys.setprofile(None)
    assert plain and "text_delta" not in called
    read = chunks.text_chunk(answer)
    assert read is not None and [event.text for event in read[0]] == ["Hello", " there"]
