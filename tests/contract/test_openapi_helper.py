"""The OpenAPI validator catches real violations, and every fixture builder is wire-exact."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.contract import fixtures_openai as fx
from tests.contract.openapi import openai_spec, validate_openai
from tests.contract.openapi_compat import to_json_schema_2020_12
from tests.contract.spec_cache import load_yaml_cached

CHAT_REQUEST: dict[str, Any] = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is the weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "18C, sunny"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather",
                "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
                "strict": True,
            },
        }
    ],
    "tool_choice": "auto",
    "temperature": 0.2,
    "max_completion_tokens": 256,
    "stop": ["\n\n"],
    "seed": 7,
    "stream": True,
    "stream_options": {"include_usage": True},
    "response_format": {
        "type": "json_schema",
        "json_schema": {"name": "City", "schema": {"type": "object"}, "strict": True},
    },
}

RESPONSES_REQUEST: dict[str, Any] = {
    "model": "gpt-4o-mini",
    "instructions": "You are terse.",
    "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "18C, sunny"},
    ],
    "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}, "strict": True}],
    "max_output_tokens": 256,
    "previous_response_id": "resp_123",
    "text": {"format": {"type": "json_schema", "name": "City", "schema": {"type": "object"}, "strict": True}},
    "stream": False,
}

ERRORS = [
    fx.insufficient_quota_error(),
    fx.rate_limit_error(),
    fx.context_length_exceeded_error(),
    fx.server_error(500),
    fx.server_error(503),
]

FIXTURES: list[tuple[str, Callable[[], Any]]] = [
    ("CreateChatCompletionResponse", fx.chat_completion),
    ("CreateChatCompletionResponse", fx.chat_completion_tool_calls),
    ("CreateChatCompletionResponse", fx.chat_completion_truncated),
    ("CreateChatCompletionResponse", fx.chat_completion_refusal),
    ("CreateChatCompletionResponse", lambda: fx.chat_completion(usage=fx.TokenUsage(100, 50, 64, 32))),
    ("CreateChatCompletionStreamResponse", fx.chat_stream_text),
    ("CreateChatCompletionStreamResponse", fx.chat_stream_tool_call),
    ("Response", fx.response),
    ("Response", fx.response_text),
    ("Response", fx.response_function_call),
    ("Response", fx.response_incomplete),
    ("Response", fx.response_refusal),
    ("Response", fx.response_failed),
    ("CreateChatCompletionStreamResponse", fx.chat_stream_refusal),
    ("ResponseStreamEvent", fx.responses_stream_text),
    ("ResponseStreamEvent", fx.responses_stream_function_call),
    ("ResponseStreamEvent", fx.responses_stream_incomplete),
    ("ResponseStreamEvent", fx.responses_stream_refusal),
    ("ResponseStreamEvent", fx.responses_stream_error),
    ("ResponseStreamEvent", fx.responses_stream_failed),
    ("ErrorResponse", lambda: ERRORS),
]


def _as_list(payload: object) -> list[object]:
    return payload if isinstance(payload, list) else [payload]


def _violation(schema: str, instance: object) -> str:
    with pytest.raises(AssertionError) as caught:
        validate_openai(schema, instance)
    return str(caught.value)


@pytest.mark.parametrize(("schema", "build"), FIXTURES, ids=[f"{s}-{b.__name__}" for s, b in FIXTURES])
def test_fixture_matches_spec(schema: str, build: Callable[[], Any]) -> None:
    for payload in _as_list(build()):
        validate_openai(schema, payload)


def test_stream_events_validate_against_their_own_event_schema() -> None:
    schema_of = {
        "response.created": "ResponseCreatedEvent",
        "response.in_progress": "ResponseInProgressEvent",
        "response.output_item.added": "ResponseOutputItemAddedEvent",
        "response.content_part.added": "ResponseContentPartAddedEvent",
        "response.output_text.delta": "ResponseTextDeltaEvent",
        "response.output_text.done": "ResponseTextDoneEvent",
        "response.content_part.done": "ResponseContentPartDoneEvent",
        "response.output_item.done": "ResponseOutputItemDoneEvent",
        "response.function_call_arguments.delta": "ResponseFunctionCallArgumentsDeltaEvent",
        "response.function_call_arguments.done": "ResponseFunctionCallArgumentsDoneEvent",
        "response.completed": "ResponseCompletedEvent",
        "response.incomplete": "ResponseIncompleteEvent",
        "response.refusal.delta": "ResponseRefusalDeltaEvent",
        "response.refusal.done": "ResponseRefusalDoneEvent",
        "error": "ResponseErrorEvent",
        "response.failed": "ResponseFailedEvent",
    }
    events = (
        fx.responses_stream_text()
        + fx.responses_stream_function_call()
        + fx.responses_stream_incomplete()
        + fx.responses_stream_refusal()
        + fx.responses_stream_error()
        + fx.responses_stream_failed()
    )
    for event in events:
        validate_openai(schema_of[event["type"]], event)
    assert {event["type"] for event in events} == set(schema_of)


def test_fixture_semantics() -> None:
    usage = fx.TokenUsage(input_tokens=100, output_tokens=50, cached_tokens=64, reasoning_tokens=32)
    chat = fx.chat_completion(usage=usage)["usage"]
    assert (chat["prompt_tokens"], chat["completion_tokens"], chat["total_tokens"]) == (100, 50, 150)
    assert chat["prompt_tokens_details"]["cached_tokens"] == 64
    assert chat["completion_tokens_details"]["reasoning_tokens"] == 32
    responses = fx.response_text(usage=usage)["usage"]
    assert responses["input_tokens_details"]["cached_tokens"] == 64
    assert responses["output_tokens_details"]["reasoning_tokens"] == 32
    assert fx.response_incomplete()["incomplete_details"] == {"reason": "max_output_tokens"}
    deltas = [c["choices"][0]["delta"] for c in fx.chat_stream_tool_call()[1:-2]]
    assert "".join(d["tool_calls"][0]["function"]["arguments"] for d in deltas) == fx.FunctionCall().arguments
    assert fx.chat_stream_text()[-1]["choices"] == []
    events = fx.responses_stream_text(["a", "b"])
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[-1]["response"]["output"][0]["content"][0]["text"] == "ab"


@pytest.mark.parametrize(
    ("schema", "instance"),
    [("CreateChatCompletionRequest", CHAT_REQUEST), ("CreateResponse", RESPONSES_REQUEST)],
)
def test_documented_valid_requests_pass(schema: str, instance: object) -> None:
    validate_openai(schema, instance)


@pytest.mark.parametrize("schema", ["CreateChatCompletionResponse", "CreateChatCompletionStreamResponse"])
def test_spec_own_examples_pass(schema: str) -> None:
    example = openai_spec()["components"]["schemas"][schema]["x-oaiMeta"]["example"]
    documents = [json.loads(part) for part in example.split("\n\n") if part.strip() not in ("", "....")]
    assert documents
    for document in documents:
        validate_openai(schema, document)


def _mutated(base: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    instance = copy.deepcopy(base)
    edit(instance)
    return instance


VIOLATIONS: list[tuple[str, dict[str, Any], str]] = [
    # wrong type
    ("CreateChatCompletionRequest", _mutated(CHAT_REQUEST, lambda r: r.update(temperature="hot")), "$.temperature"),
    (
        "CreateResponse",
        _mutated(RESPONSES_REQUEST, lambda r: r.update(max_output_tokens="many")),
        "$.max_output_tokens",
    ),
    ("CreateChatCompletionResponse", _mutated(fx.chat_completion(), lambda r: r.update(created="now")), "$.created"),
    ("Response", _mutated(fx.response_text(), lambda r: r["usage"].update(input_tokens=1.5)), "$.usage.input_tokens"),
    (
        "CreateChatCompletionStreamResponse",
        _mutated(fx.chat_stream_text()[1], lambda r: r["choices"][0]["delta"].update(content=7)),
        "$.choices[0].delta.content",
    ),
    # unknown enum value
    (
        "CreateChatCompletionRequest",
        _mutated(CHAT_REQUEST, lambda r: r.update(tool_choice="sometimes")),
        "$.tool_choice",
    ),
    ("CreateResponse", _mutated(RESPONSES_REQUEST, lambda r: r.update(truncation="maybe")), "$.truncation"),
    (
        "CreateChatCompletionResponse",
        _mutated(fx.chat_completion(), lambda r: r["choices"][0].update(finish_reason="done")),
        "$.choices[0].finish_reason",
    ),
    ("Response", _mutated(fx.response_text(), lambda r: r.update(status="done")), "$.status"),
    (
        "CreateChatCompletionStreamResponse",
        _mutated(fx.chat_stream_text()[-2], lambda r: r["choices"][0].update(finish_reason="eos")),
        "$.choices[0].finish_reason",
    ),
    # missing required field
    ("CreateChatCompletionRequest", _mutated(CHAT_REQUEST, lambda r: r.pop("messages")), "'messages' is a required"),
    (
        "CreateResponse",
        _mutated(RESPONSES_REQUEST, lambda r: r["tools"][0].pop("name")),
        "$.tools[0]: 'name' is a required property",
    ),
    (
        "CreateChatCompletionResponse",
        _mutated(fx.chat_completion(), lambda r: r.pop("choices")),
        "'choices' is a required",
    ),
    ("Response", _mutated(fx.response_text(), lambda r: r.pop("output")), "'output' is a required"),
    (
        "CreateChatCompletionStreamResponse",
        _mutated(fx.chat_stream_text()[1], lambda r: r["choices"][0].pop("index")),
        "'index' is a required",
    ),
]


@pytest.mark.parametrize(("schema", "instance", "expected"), VIOLATIONS)
def test_violations_are_caught(schema: str, instance: dict[str, Any], expected: str) -> None:
    assert expected in _violation(schema, instance)


def test_every_violation_is_listed_with_its_path() -> None:
    def break_twice(body: dict[str, Any]) -> None:
        body.update(temperature="hot", n="two")

    message = _violation("CreateChatCompletionRequest", _mutated(CHAT_REQUEST, break_twice))
    assert message.startswith("2 violation(s) of CreateChatCompletionRequest")
    assert "$.temperature: 'hot' is not of type" in message
    assert "$.n: 'two' is not of type" in message


def test_union_failure_names_the_intended_variant() -> None:
    body = fx.response_text()
    body["output"][0]["content"][0]["type"] = "output_txt"
    message = _violation("Response", body)
    assert "$.output[0].content[0].type: 'output_txt' is not one of ['output_text']" in message
    assert "reasoning" not in message


def test_unknown_schema_name_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="NoSuchSchema"):
        validate_openai("NoSuchSchema", {})


# --- OpenAPI 3.0 leftovers are translated, not ignored -------------------------------------


def test_nullable_accepts_null_and_still_checks_type() -> None:
    validate_openai("CreateChatCompletionRequest", {**CHAT_REQUEST, "max_completion_tokens": None})
    assert "$.max_completion_tokens" in _violation(
        "CreateChatCompletionRequest", {**CHAT_REQUEST, "max_completion_tokens": "ten"}
    )


def test_nullable_enum_accepts_null() -> None:
    chunk = fx.chat_stream_text()[1]
    assert chunk["choices"][0]["finish_reason"] is None
    validate_openai("CreateChatCompletionStreamResponse", chunk)


def test_boolean_exclusive_minimum_is_a_real_bound() -> None:
    spec = {
        "components": {"schemas": {"Lr": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "nullable": True}}}
    }
    assert to_json_schema_2020_12(spec)["components"]["schemas"]["Lr"] == {
        "type": ["number", "null"],
        "exclusiveMinimum": 0,
    }


def test_nullable_ref_becomes_any_of_null() -> None:
    spec = {"components": {"schemas": {"A": {"$ref": "#/components/schemas/B", "nullable": True}}}}
    assert to_json_schema_2020_12(spec)["components"]["schemas"]["A"] == {
        "anyOf": [{"$ref": "#/components/schemas/B"}, {"type": "null"}]
    }


def test_discriminated_one_of_accepts_overlapping_variants() -> None:
    easy_or_item = {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    validate_openai("InputItem", easy_or_item)
    assert "$.content" in _violation("InputItem", {"role": "user", "content": 3})


def test_recursive_ref_points_at_its_anchor() -> None:
    compound = openai_spec()["components"]["schemas"]["CompoundFilter"]
    assert "$recursiveAnchor" not in compound
    branches = compound["properties"]["filters"]["items"]["anyOf"]
    assert {"$ref": "#/components/schemas/CompoundFilter"} in branches
    leaf = {"type": "eq", "key": "region", "value": "eu"}
    nested = {"type": "and", "filters": [leaf, {"type": "or", "filters": [leaf, {"type": "bogus"}]}]}
    assert "$.filters[1]" in _violation("CompoundFilter", nested)


# --- loading -------------------------------------------------------------------------------


def test_spec_is_cached_as_json_keyed_by_sha256(tmp_path: Path) -> None:
    source = tmp_path / "spec.yaml"
    source.write_text("a: 2024-10-01\nb: [1, null]\n")
    assert load_yaml_cached(source, tmp_path / "cache") == {"a": "2024-10-01", "b": [1, None]}
    (cached,) = (tmp_path / "cache").iterdir()
    assert cached.name == f"spec.{hashlib.sha256(source.read_bytes()).hexdigest()}.json"
    cached.write_text('{"from": "cache"}')
    assert load_yaml_cached(source, tmp_path / "cache") == {"from": "cache"}
    source.write_text("a: 3\n")
    assert load_yaml_cached(source, tmp_path / "cache") == {"a": 3}


def test_cached_spec_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.contract import spec_cache
    from tests.contract.openapi import OPENAI_SPEC

    first = load_yaml_cached(OPENAI_SPEC)

    def no_yaml(*args: object, **kwargs: object) -> object:
        raise AssertionError("the YAML was parsed again although its JSON cache exists")

    monkeypatch.setattr(spec_cache.yaml, "load", no_yaml)
    assert load_yaml_cached(OPENAI_SPEC) == first
