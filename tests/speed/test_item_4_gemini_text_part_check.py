"""Issue 34 item 4: llmplex-gemini's reading of the common streamed chunk (``chunks.text_chunk``) takes a part that
is a text and nothing else by its text alone (nearly every part of a stream), without asking which of the part's keys
it knows; it says plain exactly where the full field-by-field check (``chunks._CHUNK``) does."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from llmplex_gemini import chunks


def _chunk(parts: list[Any]) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}],
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 4, "totalTokenCount": 13},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r1",
    }


@contextmanager
def _key_checks() -> Iterator[list[str]]:
    """How often a set of known keys is asked whether it holds an object's keys (``frozenset.issuperset``)."""
    seen: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call" and getattr(arg, "__name__", "") == "issuperset":
            seen.append(arg.__name__)

    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)


def test_item_4_gemini_text_parts_are_checked_by_their_text_alone() -> None:
    one, many = _chunk([{"text": "Hel"}]), _chunk([{"text": f"w{i} "} for i in range(10)])
    with _key_checks() as for_one:
        assert chunks.text_chunk(one) is not None
    with _key_checks() as for_many:
        assert chunks.text_chunk(many) is not None
    assert len(for_many) == len(for_one) == 4  # the chunk, its usage, the candidate, its content: none per part


@pytest.mark.parametrize(
    ("part", "plain"),
    [
        ({"text": "Hi"}, True),
        ({"text": ""}, True),
        ({"text": None}, True),
        ({"text": 5}, False),
        ({"text": b"Hi"}, False),
        ({"text": True}, False),
        ({"thought": True}, True),
        ({"thought": 1}, False),
        ({"text": "Hi", "thought": True}, True),
        ({"text": "Hi", "thought": "yes"}, False),
        ({"functionCall": {"name": "f", "args": {}}}, False),
        ({"inlineData": {"data": "AA=="}}, False),
        ({"thoughtSignature": "c2ln"}, False),
        ({}, True),
    ],
)
def test_item_4_gemini_text_part_check_agrees_with_the_full_one(part: dict[str, Any], plain: bool) -> None:
    assert (chunks.text_chunk(_chunk([part])) is not None) is plain
    for parts in ([part], [{"text": "a"}, part], [part, {"text": "b"}]):
        chunk = _chunk(parts)
        assert chunks.text_chunk(chunk) is None or chunks._CHUNK(chunk), parts
        assert chunks.is_plain(chunk) is chunks._CHUNK(chunk), parts
