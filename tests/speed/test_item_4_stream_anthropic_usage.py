"""Issue 34 item 4: llmplex-anthropic reads a decoded stream event's usage straight from its ``dict``.

``message_start`` and ``message_delta`` carry usage; on the lean path it is decoded JSON, whose counts
``usage_fields`` reads with ``dict.get`` instead of a ``field`` call per count. The usage and events are the ones the
general reading gives, for every split of the counts between the two events, ``cache_creation`` (cache writes by
lifetime), nulls, and counts the usage refuses (the same error).
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any

import pytest
from llmplex_anthropic import response
from llmplex_anthropic.streaming import parse_stream_event

from llmplex.errors import LLMUsageError
from llmplex.types import Message, Request, StreamEvent, StreamState

_COUNTS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def _events(start_usage: dict[str, Any], delta_usage: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    start = {
        "type": "message_start",
        "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "usage": start_usage},
    }
    delta = {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": delta_usage}
    return start, delta


def _parsed(start: Any, delta: Any) -> list[StreamEvent]:
    state = StreamState(Request(model="claude", messages=(Message.user("hi"),)))
    assert parse_stream_event(start, state) == []
    return parse_stream_event(delta, state)


def _as_objects(value: Any) -> Any:
    """Decoded JSON as objects with attributes, as the SDK's models are read (``field``: ``getattr``)."""
    if isinstance(value, dict):
        return SimpleNamespace(**{key: _as_objects(item) for key, item in value.items()})
    return value


def _by_sdk_models(start: dict[str, Any], delta: dict[str, Any]) -> list[StreamEvent]:
    """The same events read as the SDK's models are (the general reading, ``usage_fields``)."""
    return _parsed(_as_objects(start), _as_objects(delta))


def _same(fast: list[StreamEvent], general: list[StreamEvent]) -> None:
    assert fast == general
    for one, other in zip(fast, general, strict=True):
        assert list(one.__dict__.items()) == list(other.__dict__.items())
        assert one.model_fields_set == other.model_fields_set
    assert fast[0].usage is not None and general[0].usage is not None
    assert fast[0].usage.model_fields_set == general[0].usage.model_fields_set


SPLITS = [
    (dict(zip(_COUNTS, start, strict=True)), dict(zip(_COUNTS, later, strict=True)))
    for start, later in itertools.product(
        [(9, 1, 0, 0), (9, 1, 4, 2), (100, 0, None, None)], [(None, 32, None, None), (3, 32, 5, 7), (None, 0, 0, 0)]
    )
]


@pytest.mark.parametrize(("start_usage", "delta_usage"), SPLITS, ids=repr)
def test_item_4_anthropic_usage_read_from_the_dict_is_the_general_one(
    start_usage: dict[str, Any], delta_usage: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    start, delta = _events(start_usage, delta_usage)
    general = _by_sdk_models(start, delta)
    _same(_parsed(start, delta), general)
    monkeypatch.setattr(response, "field", _not_called)  # decoded JSON: read straight from the dict
    assert response.usage_fields(start_usage) == {name: start_usage[name] for name in _COUNTS}


def _not_called(value: Any, name: str) -> Any:
    raise AssertionError(f"field read {name!r} of {value!r}")


def test_item_4_anthropic_usage_with_cache_writes_by_lifetime_is_read_as_before() -> None:
    creation = {"ephemeral_5m_input_tokens": 3, "ephemeral_1h_input_tokens": 4}
    start, delta = _events({"input_tokens": 9, "output_tokens": 1, "cache_creation": creation}, {"output_tokens": 6})
    fast = _parsed(start, delta)
    _same(fast, _by_sdk_models(start, delta))
    usage = fast[0].usage
    assert usage is not None and (usage.cache_write_tokens, usage.cache_write_1h_tokens) == (7, 4)


def test_item_4_anthropic_usage_with_thinking_details_and_no_usage() -> None:
    start, delta = _events({"input_tokens": 9}, {"output_tokens": 8, "output_tokens_details": {"thinking_tokens": 5}})
    (used, _finish) = _parsed(start, delta)
    assert used.usage is not None and (used.usage.reasoning_tokens, used.usage.output_tokens) == (5, 8)
    start, delta = _events({"input_tokens": 9}, None)
    (used, _finish) = _parsed(start, delta)
    assert used.usage is not None and used.usage.input_tokens == 9


@pytest.mark.parametrize(
    "bad",
    [{"output_tokens": -1}, {"output_tokens": 10**13}, {"output_tokens": "7"}, {"cache_read_input_tokens": 10**13}],
    ids=repr,
)
def test_item_4_anthropic_impossible_usage_still_raises(bad: dict[str, Any]) -> None:
    start, delta = _events({"input_tokens": 9}, bad)
    with pytest.raises(LLMUsageError):
        _parsed(start, delta)
