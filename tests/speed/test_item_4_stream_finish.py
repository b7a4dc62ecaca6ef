"""Issue 34 item 4: the finish event every stream ends with is built without validation.

``StreamEvent.finish_event`` builds ``StreamEvent(type="finish", ...)`` without pydantic's validation when the
reason is one of ``FinishReason``'s strings and the ids are ``str`` or ``None``: the same object in every way.
Anything else is validated as before (the same event, or the same error). The anthropic, openai (Chat
Completions, Responses) and gemini stream parsers end their streams with it: the last chunk of a text answer
validates no ``StreamEvent``.
"""

from __future__ import annotations

from typing import Any, get_args

import pytest
from llmplex_anthropic.streaming import parse_stream_event
from llmplex_gemini.streaming import parse_chunk
from llmplex_openai.chat import parse_chat_event
from llmplex_openai.responses import parse_responses_event
from pydantic import ValidationError

from llmplex.types import FinishReason, Message, Request, StreamEvent, StreamState
from tests.speed.test_item_4_stream_end import _Counting


def _same(fast: Any, validated: Any) -> None:
    assert fast == validated and hash(fast) == hash(validated) and repr(fast) == repr(validated)
    assert list(fast.__dict__.items()) == list(validated.__dict__.items())
    assert fast.model_fields_set == validated.model_fields_set
    assert (fast.__pydantic_extra__, fast.__pydantic_private__) == (None, None)
    assert fast.model_dump_json() == validated.model_dump_json()


@pytest.mark.parametrize("reason", get_args(FinishReason))
@pytest.mark.parametrize(("response_id", "model"), [(None, None), ("r1", None), (None, "m-2"), ("r1", "m-2")])
def test_item_4_finish_event_is_the_validated_event(reason: str, response_id: str | None, model: str | None) -> None:
    fast = StreamEvent.finish_event(reason, response_id, model)
    _same(fast, StreamEvent(type="finish", finish_reason=reason, response_id=response_id, model=model))
    with pytest.raises(ValidationError):  # frozen, as the validated event
        fast.text = "x"  # type: ignore[misc]


class _Text(str):
    pass


@pytest.mark.parametrize(
    ("reason", "response_id", "model"),
    [
        ("weird", None, None),
        ("", None, None),
        (None, "r", None),
        (3, "r", None),
        ("stop", 5, None),
        ("stop", None, b"m"),
        ("stop", None, ["m"]),
        (_Text("stop"), None, None),
        ("stop", _Text("r"), None),
        ("stop", None, _Text("m")),
        ("STOP", None, None),
    ],
    ids=repr,
)
def test_item_4_finish_event_of_other_values_is_validated(reason: Any, response_id: Any, model: Any) -> None:
    """What validation refuses is refused with the same error; what it coerces comes out coerced."""
    try:
        validated = StreamEvent(type="finish", finish_reason=reason, response_id=response_id, model=model)
    except ValidationError as error:
        with pytest.raises(ValidationError) as raised:
            StreamEvent.finish_event(reason, response_id, model)
        assert raised.value.errors() == error.errors()
        return
    fast = StreamEvent.finish_event(reason, response_id, model)
    _same(fast, validated)
    assert type(fast.finish_reason) is type(validated.finish_reason)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> _Counting:
    counting = _Counting(StreamEvent.__pydantic_validator__)
    monkeypatch.setattr(StreamEvent, "__pydantic_validator__", counting)
    return counting


def _state() -> StreamState:
    return StreamState(Request(model="m", messages=(Message.user("hi"),)))


def test_item_4_anthropic_stream_ends_without_validating_an_event(counted: _Counting) -> None:
    state = _state()
    start = {"type": "message_start", "message": {"id": "msg_1", "model": "claude-x", "usage": {"input_tokens": 7}}}
    delta = {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 4}}
    assert parse_stream_event(start, state) == []
    used, finish = parse_stream_event(delta, state)
    assert counted.calls == 0
    _same(finish, StreamEvent(type="finish", finish_reason="length", response_id="msg_1", model=None))
    assert used.usage is not None and used.usage.total_tokens == 11


def test_item_4_chat_stream_ends_without_validating_an_event(counted: _Counting) -> None:
    chunk = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "content_filter"}]}
    (finish,) = parse_chat_event(chunk, _state())
    assert counted.calls == 0
    _same(finish, StreamEvent(type="finish", finish_reason="content_filter", response_id="c1", model=None))


def test_item_4_responses_stream_ends_without_validating_an_event(counted: _Counting) -> None:
    usage = {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}
    done = {"type": "response.completed", "response": {"id": "r1", "model": "m", "status": "completed", "usage": usage}}
    used, finish = parse_responses_event(done, _state())
    assert counted.calls == 0
    _same(finish, StreamEvent(type="finish", finish_reason="stop", response_id="r1", model="m"))
    assert used.usage is not None and used.usage.total_tokens == 7


def test_item_4_gemini_stream_ends_without_validating_an_event(counted: _Counting) -> None:
    chunk = {
        "candidates": [{"content": {"parts": [{"text": "hi"}], "role": "model"}, "finishReason": "MAX_TOKENS"}],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4},
        "modelVersion": "g-1",
        "responseId": "r9",
    }
    text, used, finish = parse_chunk(chunk, _state())
    assert counted.calls == 0
    _same(finish, StreamEvent(type="finish", finish_reason="length", response_id="r9", model="g-1"))
    assert (text.text, used.usage.total_tokens if used.usage else None) == ("hi", 4)
