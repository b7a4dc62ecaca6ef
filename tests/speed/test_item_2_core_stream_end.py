"""Issue 34 (items 2 and 4: core's share of a stream's end): ``Pipeline._final`` prices the stream's usage before the
answer is built from it, so the answer is not copied to set the priced usage, and the last event is built without
validating it again. The event, its answer and the usage's price are the ones the old way gave (the answer built,
then copied with the priced usage, then validated into ``StreamEvent(type="response", ...)``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import llmplex
from llmplex.engine import pipeline as pipeline_module
from llmplex.engine.assembly import StreamAssembler
from llmplex.engine.pipeline import Pipeline
from llmplex.engine.request_builder import build_request
from llmplex.types import Response, StreamEvent, Usage
from tests.speed.test_item_4_stream_end import _Counting

BASE = "http://127.0.0.1:8943/v1"  # never reached: the pipeline's stream end only


@pytest.fixture(scope="module")
def client() -> Iterator[llmplex.Client]:
    table = {"plugin": "openai", "base_url": BASE, "api": "chat", "api_key": "sk-item2"}
    client = llmplex.Client(providers={"local": table}, disabled=["recorder", "exitobserver"])
    yield client
    client.close()


def _pipeline(client: llmplex.Client, model: str = "local:gpt-4o-mini") -> Pipeline:
    route = client.route(model)
    pipeline = Pipeline(
        "req-1",
        route,
        build_request(route.model, "hi", stream=True),
        client.calls.plan(route, None, {}),
        client.telemetry,
    )
    pipeline.retrier.begin(stream=True)
    return pipeline


def _assembler(answered: str | None, usage: Usage, *, call: bool = False) -> StreamAssembler:
    assembler = StreamAssembler("local", "gpt-4o-mini")
    for piece in ("Hel", "lo"):
        assembler.add(StreamEvent.text_delta(piece, "chatcmpl-1", answered))
    if call:
        assembler.add(StreamEvent(type="tool_call", tool_call_index=0, tool_call_id="c1", tool_name="f"))
    assembler.add(StreamEvent.usage_event(usage, "chatcmpl-1", None))
    assembler.add(StreamEvent.finish_event("stop"))
    return assembler


def _the_old_way(pipeline: Pipeline, assembler: StreamAssembler, latency: float) -> StreamEvent:
    """What ``_final`` gave before: the answer built, copied with its priced usage, validated into the event."""
    response = pipeline._account(assembler.response(pipeline.retrier.sent, latency))
    return StreamEvent(type="response", response=response)


def _state(event: StreamEvent) -> tuple[Any, ...]:
    response = event.response
    assert response is not None
    return (
        list(event.__dict__.items()),
        event.model_fields_set,
        list(response.__dict__.items()),
        response.model_fields_set,
        response.usage.__pydantic_private__,
        response.usage.model_fields_set,
        response.usage.cost_usd,
        response.usage.cost_note,
        event.model_dump_json(),
    )


USAGES = [
    Usage(input_tokens=9, output_tokens=2),
    Usage.of({"input_tokens": 900, "output_tokens": 20, "cached_tokens": 800}),
    Usage.unreported(),
]


@pytest.mark.parametrize("usage", USAGES, ids=range(len(USAGES)))
@pytest.mark.parametrize("answered", ["gpt-4o-mini-2024-07-18", None, "not-a-priced-model"])
@pytest.mark.parametrize("call", [False, True])
def test_item_2_the_stream_end_is_the_old_event_without_a_copy_or_validation(
    client: llmplex.Client, usage: Usage, answered: str | None, call: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new, assembler = _pipeline(client), _pipeline(client), _assembler(answered, usage, call=call)
    copies: list[Response] = []
    copied = pipeline_module._copied

    def counted(response: Response, update: dict[str, Any]) -> Response:
        copies.append(response)
        return copied(response, update)

    events = _Counting(StreamEvent.__pydantic_validator__)
    monkeypatch.setattr(pipeline_module, "_copied", counted)
    monkeypatch.setattr(StreamEvent, "__pydantic_validator__", events)
    event = new._final(assembler, True)
    assert (copies, events.calls) == ([], 0)
    monkeypatch.undo()
    assert event.response is not None
    expected = _the_old_way(old, _assembler(answered, usage, call=call), event.response.latency)
    assert _state(event) == _state(expected) and event == expected
    assert event.response is not None and event.response.usage == usage


def test_item_2_the_priced_stream_end_costs_what_the_answer_costs(client: llmplex.Client) -> None:
    event = _pipeline(client)._final(_assembler("gpt-4o-mini-2024-07-18", USAGES[1]), True)
    assert event.response is not None and event.response.usage.cost_usd is not None
    assert event.response.usage.cost_usd == USAGES[1].priced("openai", "gpt-4o-mini-2024-07-18").cost_usd


def test_item_2_a_response_subclass_is_validated_into_the_event(
    client: llmplex.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Answer(Response):
        pass

    events = _Counting(StreamEvent.__pydantic_validator__)
    monkeypatch.setattr(StreamEvent, "__pydantic_validator__", events)
    answer = Answer(text="hi")
    event = StreamEvent.response_event(answer)
    assert events.calls == 1 and event == StreamEvent(type="response", response=answer)
