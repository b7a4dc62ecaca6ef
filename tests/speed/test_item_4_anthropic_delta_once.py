"""Issue 34 item 4: Anthropic's ``message_delta`` (once a stream, at its end) checks its usage once.

The usage event is ``StreamEvent.usage_of`` the counts (``usage_event(Usage.of(counts))`` without checking the
settled usage a second time), and a usage without ``cache_creation`` builds no empty dict of cache writes; the
events are the ones ``usage_event`` gives, and bad counts raise what they raised.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from llmplex_anthropic import response
from llmplex_anthropic.streaming import parse_stream_event

from llmplex.errors import LLMUsageError
from llmplex.types import Message, Request, StreamEvent, StreamState, Usage
from llmplex.types import usage as usage_module
from tests.plugins.anthropic.wire import message_start

START = message_start({"input_tokens": 9}, model="claude-x", message_id="msg_1")


def _delta(usage: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": usage}


def _started() -> StreamState:
    state = StreamState(Request(model="claude", messages=(Message.user("hi"),)))
    assert parse_stream_event(START, state) == []
    return state


@contextmanager
def _checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Each time a usage's counts are checked against each other (``usage._contradiction``)."""
    seen: list[dict[str, Any]] = []
    check = usage_module._contradiction

    def counted(counts: dict[str, Any]) -> str | None:
        seen.append(dict(counts))
        return check(counts)

    monkeypatch.setattr(usage_module, "_contradiction", counted)
    yield seen


def test_item_4_anthropic_message_delta_checks_its_usage_once(monkeypatch: pytest.MonkeyPatch) -> None:
    state = _started()
    with _checks(monkeypatch) as seen:
        usage_event, finish = parse_stream_event(_delta({"output_tokens": 32}), state)
    assert len(seen) == 1
    assert usage_event == StreamEvent(
        type="usage", usage=Usage(input_tokens=9, output_tokens=32), response_id="msg_1", model="claude-x"
    )
    assert finish == StreamEvent(type="finish", finish_reason="stop", response_id="msg_1")


def test_item_4_anthropic_usage_without_cache_creation_builds_no_empty_update() -> None:
    updates: list[Any] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call" and getattr(arg, "__name__", "") == "update":
            updates.append(arg)

    sys.setprofile(profile)
    try:
        counts = response.usage_fields({"input_tokens": 3, "output_tokens": 4})
    finally:
        sys.setprofile(None)
    assert updates == []
    assert counts == {
        "input_tokens": 3,
        "output_tokens": 4,
        "cache_read_input_tokens": None,
        "cache_creation_input_tokens": None,
    }
    with_writes = response.usage_fields({"cache_creation": {"ephemeral_1h_input_tokens": 2}})
    assert with_writes["ephemeral_1h_input_tokens"] == 2 and with_writes["ephemeral_5m_input_tokens"] is None


@pytest.mark.parametrize(
    "counts",
    [
        {"input_tokens": 9, "output_tokens": 32},
        {"input_tokens": 9, "output_tokens": 32, "cached_tokens": 0, "cache_write_tokens": 0},
        {"input_tokens": 20, "output_tokens": 5, "cached_tokens": 4, "cache_write_tokens": 6, "reasoning_tokens": 2},
        {"input_tokens": 9.0, "output_tokens": 3},
        {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
    ],
)
@pytest.mark.parametrize(("response_id", "model"), [("msg_1", "claude-x"), (None, None)])
def test_item_4_usage_of_is_usage_event_of_usage_of(
    counts: dict[str, Any], response_id: str | None, model: str | None
) -> None:
    event = StreamEvent.usage_of(counts, response_id, model)
    expected = StreamEvent.usage_event(Usage.of(counts), response_id, model)
    assert event == expected and list(event.__dict__.items()) == list(expected.__dict__.items())
    assert event.model_fields_set == expected.model_fields_set
    assert event.usage is not None and expected.usage is not None
    assert event.usage.model_fields_set == expected.usage.model_fields_set


@pytest.mark.parametrize(
    "counts",
    [{"input_tokens": -1}, {"input_tokens": True}, {"input_tokens": 2, "cached_tokens": 5}, {"output_tokens": "x"}],
)
def test_item_4_usage_of_refuses_what_usage_of_refuses(counts: dict[str, Any]) -> None:
    with pytest.raises(LLMUsageError) as expected:
        Usage.of(counts)
    with pytest.raises(LLMUsageError) as got:
        StreamEvent.usage_of(counts)
    assert str(got.value) == str(expected.value)
