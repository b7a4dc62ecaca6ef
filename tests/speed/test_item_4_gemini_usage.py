"""Issue 34 item 4: a streamed chunk's usage is built once, checked once.

Gemini reports usage on every chunk. ``Usage.of`` builds a usage from counts that are already plain ``int``s in
bounds without pydantic's validation, and ``StreamEvent.usage_event`` puts an already-checked ``Usage`` into its
event without ``Usage``'s after-validator running a second time. Both are equal in every way to what
``Usage(**counts)`` and ``StreamEvent(type="usage", ...)`` give, and anything else (wrong types, negative or huge
counts, contradictions, a ``model_construct``-ed usage) is validated as before: the same object or the same error.
"""

from __future__ import annotations

import random
from typing import Any

import pydantic
import pytest
from google.genai import types
from llmplex_gemini import plain, response
from llmplex_gemini.streaming import parse_chunk

from llmplex.errors import LLMUsageError
from llmplex.types import Message, Request, StreamEvent, StreamState, Usage
from llmplex.types.usage import _COUNTS, MAX_TOKENS
from tests.plugins.gemini.wire import MODEL, text_part, usage


def _same_usage(fast: Usage, validated: Usage) -> None:
    assert fast == validated and hash(fast) == hash(validated) and repr(fast) == repr(validated)
    assert list(fast.__dict__.items()) == list(validated.__dict__.items())
    assert fast.model_fields_set == validated.model_fields_set
    assert fast.__pydantic_private__ == validated.__pydantic_private__
    assert fast.model_dump() == validated.model_dump() and fast.cost_note == validated.cost_note
    priced = (fast.priced("gemini", "gemini-2.5-flash"), validated.priced("gemini", "gemini-2.5-flash"))
    assert priced[0].cost_usd == priced[1].cost_usd and priced[0] == priced[1]


def _fitting_counts(rng: random.Random) -> dict[str, int]:
    """Counts that fit together (any of them 0), ``total_tokens`` given or left to be filled in, and some of the
    0 counts left out."""

    def upto(most: int) -> int:
        return rng.choice([0, rng.randrange(0, most + 1)])

    inputs, outputs = rng.randrange(0, 10**6), rng.choice([0, rng.randrange(0, MAX_TOKENS // 2)])
    cached, audio = upto(inputs), upto(inputs)
    full = {
        "input_tokens": inputs,
        "output_tokens": outputs,
        "total_tokens": rng.choice([0, inputs + outputs]),
        "cached_tokens": cached,
        "cache_write_tokens": upto(inputs - cached),
        "reasoning_tokens": upto(outputs),
        "input_audio_tokens": audio,
        "cached_audio_tokens": upto(min(audio, cached)),
        "output_audio_tokens": upto(outputs),
        "tool_prompt_tokens": upto(inputs),
    }
    full["cache_write_1h_tokens"] = upto(full["cache_write_tokens"])
    return {name: count for name, count in full.items() if count or rng.random() < 0.5}


def test_item_4_usage_of_fitting_counts_is_the_validated_usage() -> None:
    rng = random.Random(34)
    for _ in range(500):
        counts = _fitting_counts(rng)
        _same_usage(Usage.of(counts), Usage(**counts))
    _same_usage(Usage.of({}), Usage())
    _same_usage(Usage.of({"input_tokens": MAX_TOKENS}), Usage(input_tokens=MAX_TOKENS))


HOSTILE: list[dict[str, Any]] = [
    {"input_tokens": -1},
    {"output_tokens": MAX_TOKENS + 1},
    {"input_tokens": 10**40},
    {"input_tokens": True},
    {"input_tokens": "5"},
    {"input_tokens": None},
    {"input_tokens": 2.5},
    {"input_tokens": [1]},
    {"input_tokens": 3, "cached_tokens": 4},
    {"input_tokens": 3, "cached_tokens": 2, "cache_write_tokens": 2},
    {"output_tokens": 3, "reasoning_tokens": 4},
    {"input_tokens": 3, "output_tokens": 2, "total_tokens": 4},
    {"input_tokens": 3, "tool_prompt_tokens": 5},
    {"cache_write_tokens": 1, "input_tokens": 1, "cache_write_1h_tokens": 2},
    {"output_tokens": 1, "output_audio_tokens": 2},
    {"input_tokens": 1, "input_audio_tokens": 2},
    {"input_tokens": 9, "cached_tokens": 1, "input_audio_tokens": 5, "cached_audio_tokens": 2},
    {"input_tokens": 9, "cached_tokens": 5, "input_audio_tokens": 1, "cached_audio_tokens": 2},
]


@pytest.mark.parametrize("counts", HOSTILE, ids=repr)
def test_item_4_usage_of_hostile_counts_raises_what_validation_raises(counts: dict[str, Any]) -> None:
    with pytest.raises((LLMUsageError, pydantic.ValidationError)) as validated:
        Usage(**counts)
    with pytest.raises(type(validated.value)) as fast:
        Usage.of(counts)
    assert str(fast.value) == str(validated.value)


@pytest.mark.parametrize(
    "counts",
    [{"input_tokens": 5.0}, {"input_tokens": 4, "reported": False}, {"input_tokens": 2, "made_up": 3}],
    ids=repr,
)
def test_item_4_usage_of_other_values_is_validated_as_before(counts: dict[str, Any]) -> None:
    """Values validation coerces or ignores go through validation: the result is ``Usage(**counts)``'s."""
    _same_usage(Usage.of(counts), Usage(**counts))


def _same_event(fast: StreamEvent, validated: StreamEvent) -> None:
    assert fast == validated and hash(fast) == hash(validated) and repr(fast) == repr(validated)
    assert list(fast.__dict__.items()) == list(validated.__dict__.items())
    assert fast.model_fields_set == validated.model_fields_set
    assert fast.model_dump_json() == validated.model_dump_json()
    assert fast.usage is validated.usage  # validation keeps the instance: so does the fast event


@pytest.mark.parametrize(("response_id", "model"), [("r1", "m"), (None, None), ("r", None), (None, "m")])
def test_item_4_usage_event_is_the_validated_event(response_id: str | None, model: str | None) -> None:
    rng = random.Random(4)
    for counts in [_fitting_counts(rng) for _ in range(50)] + [{}]:
        used = Usage.of(counts)
        fast = StreamEvent.usage_event(used, response_id, model)
        _same_event(fast, StreamEvent(type="usage", usage=used, response_id=response_id, model=model))
        with pytest.raises(pydantic.ValidationError):
            fast.usage = Usage()  # type: ignore[misc]  # frozen, as a validated event
    summed = Usage(input_tokens=MAX_TOKENS) + Usage(input_tokens=MAX_TOKENS)  # past MAX_TOKENS, as sums may be
    unknown = Usage.unreported()
    for given in (summed, unknown):  # the ids are always given: None is set too, as text_delta sets it
        _same_event(
            StreamEvent.usage_event(given), StreamEvent(type="usage", usage=given, response_id=None, model=None)
        )


def test_item_4_usage_event_of_an_unchecked_usage_is_validated_as_before() -> None:
    """A ``model_construct``-ed usage is checked by the event as validation checks it: its contradiction raises,
    its missing total is filled in; other types of usage or ids are refused as before."""
    contradicting = Usage.model_construct(input_tokens=1, cached_tokens=5, total_tokens=1)
    with pytest.raises(LLMUsageError) as validated:
        StreamEvent(type="usage", usage=contradicting)
    with pytest.raises(LLMUsageError) as fast:
        StreamEvent.usage_event(contradicting)
    assert str(fast.value) == str(validated.value)
    untotalled = Usage.model_construct(input_tokens=2, output_tokens=3)
    event = StreamEvent.usage_event(untotalled)
    assert event.usage is untotalled and untotalled.total_tokens == 5
    for bad_usage, response_id, model in [("usage", None, None), (Usage(), 5, None), (Usage(), None, 7)]:
        with pytest.raises(pydantic.ValidationError):
            StreamEvent(type="usage", usage=bad_usage, response_id=response_id, model=model)
        with pytest.raises(pydantic.ValidationError):
            StreamEvent.usage_event(bad_usage, response_id, model)  # type: ignore[arg-type]


def _metadatas() -> list[dict[str, Any]]:
    audio = [{"modality": "AUDIO", "tokenCount": 3}, {"modality": "TEXT", "tokenCount": 4}]
    return [
        usage(5, 1),
        {"promptTokenCount": 9},
        {},
        {"promptTokenCount": 0, "candidatesTokenCount": 0, "totalTokenCount": 0},
        {**usage(7, 4), "thoughtsTokenCount": 2, "toolUsePromptTokenCount": 3, "totalTokenCount": 16},
        {**usage(7, 4), "cachedContentTokenCount": 5, "promptTokensDetails": audio, "cacheTokensDetails": audio},
        {**usage(7, 4), "candidatesTokensDetails": [{"modality": "AUDIO", "tokenCount": 2}], "promptTokensDetails": []},
    ]


@pytest.mark.parametrize("metadata", _metadatas(), ids=repr)
def test_item_4_gemini_plain_usage_is_the_sdk_models_usage(metadata: dict[str, Any]) -> None:
    """The plain chunk's usage equals ``response.usage_from`` of the SDK's model of the same metadata."""
    sdk = types.GenerateContentResponseUsageMetadata.model_validate(metadata)
    assert plain.usage_from(metadata) == response.usage_from(sdk)
    counts = plain.usage_from(metadata).model_fields_set
    assert all(getattr(plain.usage_from(metadata), name) for name in counts)  # only the counts that are not 0


@pytest.mark.parametrize(
    "metadata",
    [
        {"promptTokenCount": -3},
        {"promptTokenCount": MAX_TOKENS + 1},
        usage(5, 1) | {"totalTokenCount": 99},
        usage(2, 1) | {"cachedContentTokenCount": 5},
        usage(2, 1) | {"promptTokensDetails": [{"modality": "AUDIO", "tokenCount": -4}]},
        usage(2, 1) | {"cacheTokensDetails": [{"modality": "AUDIO", "tokenCount": -1}]},
    ],
    ids=repr,
)
def test_item_4_gemini_hostile_chunk_usage_still_raises(metadata: dict[str, Any]) -> None:
    """Read when the stream ends on it (the usage of a chunk before the last is kept, not read)."""
    chunk = {
        "candidates": [{"content": {"parts": [text_part("x")], "role": "model"}, "index": 0, "finishReason": "STOP"}],
        "usageMetadata": metadata,
        "modelVersion": MODEL,
        "responseId": "r",
    }
    state = StreamState(request=Request(model=MODEL, messages=(Message.user("hi"),)))
    with pytest.raises(LLMUsageError):
        parse_chunk(chunk, state)


def test_item_4_every_count_field_is_covered() -> None:
    """``Usage.of`` knows every count of ``Usage`` (a count added later is built fast too, or fails here)."""
    assert set(_COUNTS) == set(Usage.model_fields) - {"reported"}
    for name in _COUNTS:
        _same_usage(Usage.of({name: 0}), Usage(**{name: 0}))
