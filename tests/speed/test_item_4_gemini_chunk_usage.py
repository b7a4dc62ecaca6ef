"""Issue 34 item 4: a Gemini chunk's usage of three counts (prompt, candidates, total: what nearly every streamed
chunk reports) is built by ``Usage.totals`` and put in its event by ``StreamEvent.usage_totals``, with no dict of
counts checked one by one and no second check of the usage. The usage and the events equal, in every way, what the
general reading (``Usage.of``, ``StreamEvent.usage_event``) and the SDK's models give; anything else (wrong types,
negative or huge counts, a total that is not the sum) raises what it raised when the stream ends on it (the
usage of the chunks before is kept as the usage so far, not read: tests/speed/test_item_4_gemini_usage_so_far.py).
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pydantic
import pytest
from google.genai import types
from llmplex_gemini import plain
from llmplex_gemini.streaming import parse_chunk

from llmplex.errors import LLMUsageError
from llmplex.types import Message, Request, StreamEvent, StreamState, Usage
from llmplex.types import stream as stream_module
from llmplex.types import usage as usage_module
from llmplex.types.usage import MAX_TOKENS
from tests.plugins.gemini.wire import MODEL, function_call_part, text_part, usage
from tests.speed.test_item_4_gemini_usage import _same_event, _same_usage

REQUEST = Request(model=MODEL, messages=(Message.user("hi"),))


def _counts(inputs: int, outputs: int, total: int) -> dict[str, int]:
    given = {"input_tokens": inputs, "output_tokens": outputs, "total_tokens": total}
    return {name: count for name, count in given.items() if count != 0}


def test_item_4_usage_totals_is_usage_of_the_counts_not_zero() -> None:
    rng = random.Random(434)
    values = [0, 1, 7, MAX_TOKENS // 2, MAX_TOKENS]
    triples = [(i, o, t) for i, o in itertools.product(values, values) for t in (0, i + o)]
    triples += [(rng.randrange(MAX_TOKENS), rng.randrange(MAX_TOKENS), 0) for _ in range(30)]
    for inputs, outputs, total in triples:
        if total > MAX_TOKENS:
            continue
        fast = Usage.totals(inputs, outputs, total)
        _same_usage(fast, Usage(**_counts(inputs, outputs, total)))
        _same_usage(fast, Usage.of(_counts(inputs, outputs, total)))


@pytest.mark.parametrize(
    ("inputs", "outputs", "total"),
    [
        (-1, 0, 0),
        (0, -5, 0),
        (MAX_TOKENS + 1, 0, 0),
        (10**40, 1, 0),
        (3, 2, 4),
        (3, 2, 6),
        (MAX_TOKENS, MAX_TOKENS, 2 * MAX_TOKENS),
        (True, 1, 2),
        (1, False, 1),
        ("5", 1, 0),
        (2.0, 1, 3),
        (1, 2, 3.0),
        (None, 1, 1),
        ([1], 0, 0),
    ],
    ids=repr,
)
def test_item_4_usage_totals_of_other_values_is_usage_of(inputs: Any, outputs: Any, total: Any) -> None:
    """Values that are not fitting ``int`` counts go through ``Usage.of`` (so validation): the same usage, or the
    same error."""
    counts = _counts(inputs, outputs, total)
    try:
        expected = Usage(**counts)
    except (LLMUsageError, pydantic.ValidationError) as error:
        with pytest.raises(type(error)) as fast:
            Usage.totals(inputs, outputs, total)
        assert str(fast.value) == str(error)
    else:
        _same_usage(Usage.totals(inputs, outputs, total), expected)


@pytest.mark.parametrize(("response_id", "model"), [("r1", "m"), (None, None), ("r", None), (None, "m")])
def test_item_4_usage_totals_event_is_the_validated_event(response_id: str | None, model: str | None) -> None:
    for inputs, outputs, total in [(9, 3, 12), (9, 0, 0), (0, 0, 0), (0, 4, 4), (MAX_TOKENS, 1, 0)]:
        fast = StreamEvent.usage_totals(inputs, outputs, total, response_id, model)
        assert fast.usage is not None
        _same_usage(fast.usage, Usage(**_counts(inputs, outputs, total)))
        _same_event(fast, StreamEvent(type="usage", usage=fast.usage, response_id=response_id, model=model))
    for bad_id, bad_model in [(5, None), (None, ["m"])]:
        with pytest.raises(pydantic.ValidationError):
            StreamEvent.usage_totals(1, 1, 2, bad_id, bad_model)  # type: ignore[arg-type]
    with pytest.raises(LLMUsageError):
        StreamEvent.usage_totals(3, 2, 4, "r", "m")


def _flat(prompt: int, candidates: int) -> dict[str, int]:
    """The ``usageMetadata`` of nearly every streamed chunk: the three counts."""
    return {"promptTokenCount": prompt, "candidatesTokenCount": candidates, "totalTokenCount": prompt + candidates}


def _chunk(parts: list[dict[str, Any]], metadata: dict[str, Any] | None, finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL, "responseId": "resp-1"}
    if metadata is not None:
        chunk["usageMetadata"] = metadata
    return chunk


METADATAS: list[dict[str, Any] | None] = [
    _flat(9, 3),
    usage(9, 3),
    {"promptTokenCount": 9},
    {"promptTokenCount": 9, "totalTokenCount": 9},
    {"candidatesTokenCount": 4},
    {"promptTokenCount": 0, "candidatesTokenCount": 0, "totalTokenCount": 0},
    {"promptTokenCount": None, "candidatesTokenCount": 2, "totalTokenCount": None},
    {},
    None,
    {**usage(7, 4), "thoughtsTokenCount": 2, "totalTokenCount": 13},
    {**usage(7, 4), "cachedContentTokenCount": 5},
]
PARTS: list[list[dict[str, Any]]] = [
    [text_part("Hel")],
    [text_part("a"), text_part("b")],
    [{"text": "thinking", "thought": True}, text_part("said")],
    [function_call_part("get_weather", {"city": "Paris"}, "call_1"), text_part("x")],
    [],
]


@pytest.mark.parametrize("metadata", METADATAS, ids=repr)
def test_item_4_gemini_plain_chunk_events_are_the_sdk_models(metadata: dict[str, Any] | None) -> None:
    """Every split of text, thoughts, calls and usage: the plain chunks' events equal those of the SDK's models of
    the same chunks, read in the same order (the stream's state carried from chunk to chunk), the finish last."""
    for parts in PARTS:
        stream = [_chunk(parts, metadata), _chunk([text_part("!")], metadata, "STOP")]
        plain_state, sdk_state = StreamState(request=REQUEST), StreamState(request=REQUEST)
        for chunk in stream:
            fast = parse_chunk(chunk, plain_state)
            sdk = parse_chunk(types.GenerateContentResponse.model_validate(chunk), sdk_state)
            assert fast == sdk
            for one, other in zip(fast, sdk, strict=True):
                assert one.model_fields_set == other.model_fields_set
                if one.usage is not None:  # the same counts (the SDK's reading sets every count: its fields set)
                    assert other.usage is not None
                    assert list(one.usage.__dict__.items()) == list(other.usage.__dict__.items())


def test_item_4_gemini_chunk_usage_is_built_once_without_usage_of(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last chunk's three counts build its usage with no ``Usage.of``, no validation and no ``settled`` check
    of the built usage; the chunks before it build none."""
    calls: list[str] = []

    def refused(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            raise AssertionError(f"{name} called")

        return call

    monkeypatch.setattr(Usage, "of", classmethod(refused("Usage.of")))
    monkeypatch.setattr(Usage, "__init__", refused("Usage()"))
    monkeypatch.setattr(usage_module, "settled", refused("settled"))
    monkeypatch.setattr(stream_module, "settled", refused("settled"))
    state = StreamState(request=REQUEST)
    for index, metadata in enumerate([_flat(9, 1), {"promptTokenCount": 9}, _flat(9, 2)]):
        events = parse_chunk(_chunk([text_part(f"w{index}")], metadata, "STOP" if index == 2 else None), state)
        kinds = [event.type for event in events]
        assert kinds == (["text", "usage", "finish"] if index == 2 else ["text"]), kinds
    assert events[1].usage is not None and events[1].usage.total_tokens == 11
    assert calls == []


@pytest.mark.parametrize(
    "metadata",
    [
        {"promptTokenCount": -3},
        {"candidatesTokenCount": -1, "promptTokenCount": 2},
        {"promptTokenCount": MAX_TOKENS + 1},
        {"promptTokenCount": 10**30, "candidatesTokenCount": 1},
        _flat(5, 1) | {"totalTokenCount": 99},
        _flat(MAX_TOKENS, MAX_TOKENS),
        {"promptTokenCount": 5, "totalTokenCount": 4},
    ],
    ids=repr,
)
def test_item_4_gemini_hostile_three_counts_raise_as_validation(metadata: dict[str, Any]) -> None:
    """Impossible counts in the three-count shape of a stream's last chunk raise the error ``Usage(**counts)``
    raises for them."""
    state = StreamState(request=REQUEST)
    counts = _counts(
        metadata.get("promptTokenCount") or 0,
        metadata.get("candidatesTokenCount") or 0,
        metadata.get("totalTokenCount") or 0,
    )
    with pytest.raises(LLMUsageError) as validated:
        Usage(**counts)
    with pytest.raises(LLMUsageError) as fast:
        parse_chunk(_chunk([text_part("x")], metadata, "STOP"), state)
    assert str(fast.value) == str(validated.value)
    with pytest.raises(LLMUsageError) as direct:
        plain.usage_event(metadata, "r", MODEL)
    assert str(direct.value) == str(validated.value)


@pytest.mark.parametrize("metadata", [{"promptTokenCount": "5"}, {"promptTokenCount": 1.0}], ids=repr)
def test_item_4_gemini_three_counts_of_other_types_read_as_before(metadata: dict[str, Any]) -> None:
    """Counts that are not ``int`` (never handed on as plain data by the lean stream, which gives such a chunk to
    the SDK's model) are read by the general ``usage_from``, as before."""
    try:
        expected = StreamEvent.usage_event(plain.usage_from(metadata), "r", MODEL)
    except Exception as error:
        with pytest.raises(type(error)):
            plain.usage_event(metadata, "r", MODEL)
    else:
        assert plain.usage_event(metadata, "r", MODEL) == expected
