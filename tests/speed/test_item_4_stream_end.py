"""Issue 34 item 4: the stream's end and the usage events of the openai and anthropic streams, built once.

``StreamAssembler.response`` builds the final ``Response`` of a text answer without validating it again (its
values come from validated events), equal in every way to the validated one; an answer with tool calls or
reasoning, or values of other types, is validated as before. The openai (Chat Completions, Responses) and
anthropic stream parsers give their usage as ``Usage.of`` / ``StreamEvent.usage_event``: the same events as the
validated ones, and impossible usage still raises.
"""

from __future__ import annotations

from typing import Any

import pytest
from llmplex_anthropic.streaming import parse_stream_event
from llmplex_openai.chat import parse_chat_event
from llmplex_openai.usage import core_usage

from llmplex.engine.assembly import StreamAssembler
from llmplex.errors import LLMUsageError
from llmplex.types import Message, ReasoningPart, Request, Response, StreamEvent, StreamState, Usage


def _same(fast: Any, validated: Any) -> None:
    assert fast == validated and hash(fast) == hash(validated) and repr(fast) == repr(validated)
    assert list(fast.__dict__.items()) == list(validated.__dict__.items())
    assert fast.model_fields_set == validated.model_fields_set
    assert fast.model_dump_json() == validated.model_dump_json()


def _validated(assembler: StreamAssembler, attempts: int, latency: float) -> Response:
    return Response(
        text="".join(assembler.text),
        tool_calls=(),
        finish_reason=assembler.finish_reason or "stop",
        usage=assembler.usage,
        model=assembler.model,
        provider=assembler.provider,
        response_id=assembler.response_id,
        attempts=attempts,
        latency=latency,
        reasoning=(),
    )


USAGES = [Usage.unreported(), Usage(input_tokens=3, output_tokens=4), Usage.of({"input_tokens": 9, "cached_tokens": 2})]


@pytest.mark.parametrize("usage", USAGES, ids=repr)
@pytest.mark.parametrize("finish", [None, "length", "content_filter"])
@pytest.mark.parametrize(("response_id", "model"), [(None, None), ("r1", "m-2")])
def test_item_4_assembled_text_answer_is_the_validated_response(
    usage: Usage, finish: Any, response_id: str | None, model: str | None
) -> None:
    assembler = StreamAssembler("local", "m")
    for piece in ("Hel", "", "lo"):
        assembler.add(StreamEvent.text_delta(piece, response_id, model))
    assembler.add(StreamEvent.usage_event(usage, response_id, model))
    if finish is not None:
        assembler.add(StreamEvent(type="finish", finish_reason=finish))
    fast = assembler.response(2, 0.25)
    _same(fast, _validated(assembler, 2, 0.25))
    assert fast.usage is usage
    priced = fast.model_copy(update={"usage": usage.priced("openai", "gpt-4o")})
    assert priced.usage.cost_note == usage.priced("openai", "gpt-4o").cost_note and priced.text == "Hello"


def test_item_4_unreported_usage_is_the_validated_one() -> None:
    fast, validated = Usage.unreported(), Usage(reported=False)
    _same(fast, validated)
    assert fast.__pydantic_private__ == validated.__pydantic_private__ and fast.cost_note == validated.cost_note
    assert fast is not Usage.unreported()  # a new object each time, as before
    assert (fast + Usage(input_tokens=2)).reported is False


def test_item_4_assembled_answer_with_calls_or_reasoning_or_odd_values_is_validated() -> None:
    """Tool calls, reasoning, a usage validation would change, or values of other types: ``Response(...)``."""
    assembler = StreamAssembler("local", "m")
    assembler.add(StreamEvent(type="tool_call", tool_call_index=0, tool_call_id="c", tool_name="f"))
    assembler.add(StreamEvent(type="tool_call", tool_call_index=0, arguments_delta='{"a": 1}'))
    answer = assembler.response(1, 0.5)
    assert answer.finish_reason == "tool_calls" and answer.tool_calls[0].arguments == '{"a": 1}'
    assembler = StreamAssembler("local", "m")
    assembler.add(
        StreamEvent(type="reasoning", reasoning=ReasoningPart(format="anthropic", text="hm", data={"type": "thinking"}))
    )
    assert assembler.response(1, 0.5).reasoning == (
        ReasoningPart(format="anthropic", text="hm", data={"type": "thinking"}),
    )
    assembler = StreamAssembler("local", "m")
    assembler.usage = Usage.model_construct(input_tokens=2, output_tokens=3)  # its total still to be filled in
    assert assembler.response(1, 0.5).usage.total_tokens == 5
    assembler.usage = Usage.model_construct(input_tokens=1, cached_tokens=4, total_tokens=1)
    with pytest.raises(LLMUsageError):
        assembler.response(1, 0.5)
    assembler = StreamAssembler("local", "m")
    assert assembler.response(True, 1).attempts == 1  # coerced as validation does
    assert type(assembler.response(1, 1).latency) is float  # an int latency becomes a float, as validated


CHAT_USAGES: list[Any] = [
    {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    {"prompt_tokens": 5, "completion_tokens": 3},
    {"prompt_tokens": 9, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 2, "audio_tokens": 1}},
    {"prompt_tokens": 9, "completion_tokens": 4, "completion_tokens_details": {"reasoning_tokens": 3}},
    {"prompt_tokens": 9, "completion_tokens": 4, "prompt_cache_hit_tokens": 6},
    {"prompt_tokens": 5.0, "completion_tokens": 3},
    {"input_tokens": 7, "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 1}},
    {"total_tokens": 3},
]


@pytest.mark.parametrize("usage", CHAT_USAGES, ids=repr)
def test_item_4_openai_usage_is_the_validated_usage(usage: Any) -> None:
    state = StreamState(Request(model="m", messages=(Message.user("hi"),)))
    chunk = {"id": "c1", "model": "m", "choices": [], "usage": usage}
    (event,) = parse_chat_event(chunk, state)
    assert event.usage is not None
    counts = event.usage.model_dump(include=set(event.usage.model_fields_set))
    _same(event.usage, Usage(**counts) if event.usage.reported else Usage.unreported())
    _same(event, StreamEvent(type="usage", usage=event.usage, response_id="c1", model="m"))
    assert core_usage(usage) == event.usage


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -1, "completion_tokens": 3},
        {"prompt_tokens": 10**13, "completion_tokens": 3},
        {"prompt_tokens": True, "completion_tokens": 3},
        {"prompt_tokens": "5", "completion_tokens": 3},
        {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 9},
        {"prompt_tokens": 2, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 5}},
    ],
    ids=repr,
)
def test_item_4_openai_impossible_usage_still_raises(usage: Any) -> None:
    state = StreamState(Request(model="m", messages=(Message.user("hi"),)))
    with pytest.raises(LLMUsageError):
        parse_chat_event({"id": "c1", "model": "m", "choices": [], "usage": usage}, state)


def test_item_4_anthropic_usage_event_is_the_validated_event() -> None:
    state = StreamState(Request(model="claude", messages=(Message.user("hi"),)))
    start = {"type": "message_start", "message": {"id": "msg_1", "model": "claude-x", "usage": {"input_tokens": 7}}}
    assert parse_stream_event(start, state) == []
    delta = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}}
    used, finish = parse_stream_event(delta, state)
    assert used.usage == Usage(input_tokens=7, output_tokens=4) and finish.finish_reason == "stop"
    _same(used, StreamEvent(type="usage", usage=used.usage, response_id="msg_1", model="claude-x"))


class _Counting:
    """A model's validator that counts its calls."""

    def __init__(self, validator: Any) -> None:
        self.validator, self.calls = validator, 0

    def validate_python(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.validator.validate_python(*args, **kwargs)


def test_item_4_assembling_a_text_answer_validates_nothing_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The end of a text stream: no ``Response`` validation, and its usage is not checked a second time."""
    responses, usages = _Counting(Response.__pydantic_validator__), _Counting(Usage.__pydantic_validator__)
    monkeypatch.setattr(Response, "__pydantic_validator__", responses)
    monkeypatch.setattr(Usage, "__pydantic_validator__", usages)
    assembler = StreamAssembler("local", "m")  # its unknown usage to begin with: not validated either
    assembler.add(StreamEvent.text_delta("hi", "r", "m"))
    assembler.add(StreamEvent.usage_event(Usage.of({"input_tokens": 3, "output_tokens": 1}), "r", "m"))
    answer = assembler.response(1, 0.1)
    assert (responses.calls, usages.calls) == (0, 0) and answer.text == "hi" and answer.usage.total_tokens == 4
    assembler.add(StreamEvent(type="tool_call", tool_call_index=0, tool_name="f"))
    assembler.response(1, 0.1)
    assert responses.calls == 1  # an answer with a tool call is validated as before
