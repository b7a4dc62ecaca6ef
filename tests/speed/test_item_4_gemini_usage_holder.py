"""Issue 34 item 4: llmplex-gemini's parser keeps a plain stream's usage so far in one holder per stream.

Gemini repeats the usage so far on every chunk. ``parse_chunk`` used to make a function (``functools.partial``) of
every plain chunk's ``usageMetadata`` for ``state.usage_so_far``; it now keeps the latest counts and ids in the
stream's one holder, which builds the same usage event (``plain.usage_event``) when asked. A holder handed on (the
finish reason reports it) is never changed by a later chunk; an SDK model's usage is kept as before.
"""

from __future__ import annotations

from typing import Any

from google.genai import types
from llmplex_gemini import plain
from llmplex_gemini.streaming import parse_chunk

from llmplex.types import Message, Request, StreamState
from tests.plugins.gemini.wire import MODEL, response, text_part, usage

REQUEST = Request(model=MODEL, messages=(Message.user("hi"),))


def _chunk(index: int, finish: str | None = None, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    counts = {"promptTokenCount": 9, "candidatesTokenCount": index + 1, "totalTokenCount": 10 + index}
    return response([text_part(f"w{index} ")], finish_reason=finish, usage_metadata=metadata or counts)


def test_item_4_gemini_one_usage_holder_per_stream() -> None:
    state = StreamState(request=REQUEST)
    kept = []
    for index in range(4):
        chunk = _chunk(index)
        parse_chunk(chunk, state)
        kept.append(state.usage_so_far)
        assert state.usage_so_far is not None
        assert state.usage_so_far() == plain.usage_event(chunk["usageMetadata"], chunk["responseId"], MODEL)
    assert all(holder is kept[0] for holder in kept)  # one a stream, not one a chunk


def test_item_4_gemini_usage_holder_gives_the_latest_counts_and_ids() -> None:
    state = StreamState(request=REQUEST)
    parse_chunk(_chunk(0), state)
    later = {**_chunk(1, metadata=usage(7, 3, thoughts=2)), "responseId": "other", "modelVersion": "gemini-x"}
    parse_chunk(later, state)
    assert state.usage_so_far is not None
    event = state.usage_so_far()
    assert event == plain.usage_event(later["usageMetadata"], "other", "gemini-x")
    assert event.model_fields_set == plain.usage_event(later["usageMetadata"], "other", "gemini-x").model_fields_set
    parse_chunk({k: v for k, v in _chunk(2).items() if k != "usageMetadata"}, state)  # no usage: the latest stays
    assert state.usage_so_far() == event


def test_item_4_gemini_usage_handed_on_is_not_changed_by_a_later_chunk() -> None:
    state = StreamState(request=REQUEST)
    parse_chunk(_chunk(0), state)
    holder = state.usage_so_far
    finished = parse_chunk(_chunk(1, "STOP"), state)
    assert state.usage_so_far is None
    reported = [event for event in finished if event.type == "usage"]
    assert len(reported) == 1 and reported[0].usage is not None and reported[0].usage.output_tokens == 2
    parse_chunk(_chunk(5), state)  # a chunk after the finish starts a holder of its own
    assert state.usage_so_far is not None and state.usage_so_far is not holder
    assert holder is not None and holder().usage == reported[0].usage
    assert state.usage_so_far().usage is not None and state.usage_so_far().usage.output_tokens == 6


def test_item_4_gemini_usage_of_an_sdk_chunk_then_a_plain_one() -> None:
    state = StreamState(request=REQUEST)
    parse_chunk(types.GenerateContentResponse.model_validate(_chunk(0)), state)
    sdk_kept = state.usage_so_far
    assert sdk_kept is not None and sdk_kept().usage is not None and sdk_kept().usage.output_tokens == 1
    parse_chunk(_chunk(1), state)
    assert state.usage_so_far is not sdk_kept
    assert state.usage_so_far is not None and state.usage_so_far().usage.output_tokens == 2  # type: ignore[union-attr]
    parse_chunk(types.GenerateContentResponse.model_validate(_chunk(2)), state)
    assert state.usage_so_far().usage.output_tokens == 3  # type: ignore[union-attr]
