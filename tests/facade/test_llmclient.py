"""``LLMClient`` on the mock provider: per-entity answers, response chains, usage, batches."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

import llmplex
from llmplex import (
    Clock,
    LLMClient,
    LLMConfigurationError,
    LLMError,
    LLMOutputParseError,
    LLMRateLimitError,
    LLMRequest,
)
from llmplex.facade import RateLimitWarning
from llmplex.providers.mock import MockBackend


class Move(BaseModel):
    direction: str
    steps: int


async def _no_wait(seconds: float) -> None:
    return None


@pytest.fixture
def client() -> llmplex.Client:
    return llmplex.Client(clock=Clock(sleep=lambda s: None, asleep=_no_wait))


def agents(*ids: str) -> list[dict[str, Any]]:
    return [{"identity": {"id": i}, "position": [0, 0]} for i in ids]


def answer(backend: MockBackend, direction: str = "north", steps: int = 1, **usage: int) -> None:
    arguments = json.dumps({"direction": direction, "steps": steps})
    backend.push(tool_calls=[{"name": "Move", "arguments": arguments}], usage=usage or None)


async def test_create_response_returns_the_schema_instance(client: llmplex.Client, mock_backend: MockBackend) -> None:
    llm = LLMClient("mock:sim", client=client)
    answer(mock_backend, "east", 2)
    move = await llm.create_response("You move agents.", {"agent": "a1", "goal": [2, 0]}, Move)
    assert move == Move(direction="east", steps=2)
    messages = mock_backend.calls[0]["messages"]
    assert messages[0] == {"role": "system", "content": "You move agents."}
    assert json.loads(messages[1]["content"]) == {"agent": "a1", "goal": [2, 0]}
    assert mock_backend.calls[0]["previous_response_id"] is None


async def test_chain_sends_previous_id_keeps_a_window_and_deletes_evicted(
    client: llmplex.Client, mock_backend: MockBackend
) -> None:
    world = agents("a1")
    llm = LLMClient("mock:sim", entities=world, default_depth=2, client=client)
    for _ in range(4):
        answer(mock_backend, input_tokens=10, output_tokens=3)
        await llm.create_response("Move.", "state", Move, entity_key="move:a1")
    assert [c["previous_response_id"] for c in mock_backend.calls] == [None, "mock-1", "mock-2", "mock-3"]
    assert world[0]["_llm"]["move_chain"] == ["mock-3", "mock-4"]
    assert mock_backend.deleted == ["mock-1", "mock-2"]
    assert world[0]["_llm"]["usage"] == {"total_input_tokens": 40, "total_output_tokens": 12, "total_requests": 4}


async def test_chains_are_per_chain_name_and_depth_can_be_overridden(
    client: llmplex.Client, mock_backend: MockBackend
) -> None:
    world = agents("a1")
    llm = LLMClient("mock:sim", entities=world, default_depth=1, client=client)
    for key in ("move:a1", "talk:a1", "move:a1"):
        answer(mock_backend)
        await llm.create_response("x", "y", Move, entity_key=key)
    assert [c["previous_response_id"] for c in mock_backend.calls] == [None, None, "mock-1"]
    assert world[0]["_llm"]["move_chain"] == ["mock-3"] and world[0]["_llm"]["talk_chain"] == ["mock-2"]
    answer(mock_backend)
    await llm.create_response("x", "y", Move, entity_key="move:a1", depth_override=0)
    assert mock_backend.calls[-1]["previous_response_id"] is None
    assert world[0]["_llm"]["move_chain"] == ["mock-3"]
    assert mock_backend.deleted == ["mock-1"]


async def test_depth_zero_is_independent_but_counts_usage(client: llmplex.Client, mock_backend: MockBackend) -> None:
    world = agents("a1")
    llm = LLMClient("mock:sim", entities=world, client=client)
    for _ in range(2):
        answer(mock_backend, input_tokens=1, output_tokens=1)
        await llm.create_response("x", "y", Move, entity_key="move:a1")
    assert [c["previous_response_id"] for c in mock_backend.calls] == [None, None]
    assert "move_chain" not in world[0]["_llm"] and mock_backend.deleted == []
    assert world[0]["_llm"]["usage"]["total_requests"] == 2


async def test_entities_without_id_are_skipped_and_id_of_overrides(
    client: llmplex.Client, mock_backend: MockBackend, caplog: pytest.LogCaptureFixture
) -> None:
    world = [{"identity": {"id": 1}}, {"identity": {}}, {"name": "no identity"}]
    llm = LLMClient("mock:sim", entities=world, client=client)
    assert llm.entities.skipped == 2 and "skipped 2 entities without an id" in caplog.text
    answer(mock_backend)
    await llm.create_response("x", "y", Move, entity_key="1")
    assert world[0]["_llm"]["usage"]["total_requests"] == 1
    with pytest.raises(LLMConfigurationError, match="names entity 'ghost', which is not among"):
        await llm.create_response("x", "y", Move, entity_key="move:ghost")

    rows = [{"row_id": "r-1"}]
    by_row = LLMClient("mock:sim", entities=rows, id_of=lambda e: e["row_id"], client=client)
    answer(mock_backend)
    await by_row.create_response("x", "y", Move, entity_key="enrich:r-1")
    assert rows[0]["_llm"]["usage"]["total_requests"] == 1


async def test_batch_in_order_with_partial_failures(client: llmplex.Client, mock_backend: MockBackend) -> None:
    world = agents("a1", "a2")
    llm = LLMClient("mock:sim", entities=world, default_depth=3, client=client, concurrency=1)
    answer(mock_backend, "north")
    mock_backend.push(tool_calls=[{"name": "Move", "arguments": '{"direction": "up"}'}])
    answer(mock_backend, "south")
    results = await llm.create_batch(
        [
            LLMRequest("x", "y", Move, entity_key="move:a1"),
            LLMRequest("x", "y", Move, entity_key="move:a2"),
            LLMRequest("x", "y", Move, entity_key="move:ghost"),
            LLMRequest("x", "y", Move),
        ]
    )
    assert results[0] == Move(direction="north", steps=1)
    assert isinstance(results[1], LLMOutputParseError)
    assert isinstance(results[2], LLMConfigurationError)
    assert results[3] == Move(direction="south", steps=1)
    assert "_llm" not in world[1] or "move_chain" not in world[1]["_llm"]


async def test_batch_turns_an_unexpected_exception_into_an_llm_error_in_place(
    client: llmplex.Client, mock_backend: MockBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    acomplete = client.acomplete

    async def buggy(model: str, prompt: str, **kwargs: Any) -> llmplex.Response:
        if prompt == "boom":
            raise ZeroDivisionError("a bug below the API")
        return await acomplete(model, prompt, **kwargs)

    monkeypatch.setattr(client, "acomplete", buggy)
    llm = LLMClient("mock:sim", client=client, concurrency=1)
    answer(mock_backend, "west")
    results = await llm.create_batch([LLMRequest("x", "boom", Move), LLMRequest("x", "y", Move)])
    assert isinstance(results[0], LLMError)
    assert results[0].message == "the request failed unexpectedly: ZeroDivisionError: a bug below the API"
    assert results[1] == Move(direction="west", steps=1)


async def test_batch_runs_one_entitys_requests_in_order(client: llmplex.Client, mock_backend: MockBackend) -> None:
    world = agents("a1", "a2", "a3")
    llm = LLMClient("mock:sim", entities=world, default_depth=10, client=client, concurrency=8)
    requests = [LLMRequest("x", f"{i}", Move, entity_key=f"move:a{i % 3 + 1}") for i in range(12)]
    for _ in requests:
        answer(mock_backend)
    results = await llm.create_batch(requests)
    assert all(isinstance(r, Move) for r in results)
    for entity in world:
        number = int(entity["identity"]["id"][1])
        # the mock's n-th call (from 0) answers with response id mock-(n+1)
        mine = [(n, c) for n, c in enumerate(mock_backend.calls) if int(c["messages"][-1]["content"]) % 3 == number - 1]
        assert [int(c["messages"][-1]["content"]) for _, c in mine] == [number - 1 + 3 * k for k in range(4)]
        previous = [c["previous_response_id"] for _, c in mine]
        assert previous == [None, *(f"mock-{n + 1}" for n, _ in mine[:-1])]
        assert entity["_llm"]["move_chain"] == [f"mock-{n + 1}" for n, _ in mine]


async def test_batch_warns_with_the_rate_limit_count(client: llmplex.Client, mock_backend: MockBackend) -> None:
    llm = LLMClient("mock:sim", client=client, concurrency=1)
    mock_backend.push_error(LLMRateLimitError("slow down", retry_after=0))
    mock_backend.push_error(LLMRateLimitError("slow down", retry_after=0))
    answer(mock_backend)
    answer(mock_backend)
    with pytest.warns(RateLimitWarning, match=r"2 rate-limit hits \(HTTP 429\) during a batch of 2 requests"):
        results = await llm.create_batch([LLMRequest("x", "y", Move), LLMRequest("x", "y", Move)])
    assert all(isinstance(r, Move) for r in results)


async def test_facades_sharing_a_client_leave_no_observers_behind(client: llmplex.Client) -> None:
    await LLMClient("mock:sim", client=client).create_batch([])  # loads the mock plugin itself
    plugins_before = len(client.host.pm.get_plugins())
    for _ in range(3):
        await LLMClient("mock:sim", client=client).create_batch([])
    assert len(client.host.pm.get_plugins()) == plugins_before


def test_chains_need_a_provider_that_supports_them() -> None:
    with pytest.raises(LLMConfigurationError, match="'good' does not declare response_chains"):
        LLMClient("good:model", default_depth=1)
    LLMClient("good:model")  # depth 0 works anywhere


async def test_depth_override_on_a_provider_without_chains() -> None:
    llm = LLMClient("good:model", entities=agents("a1"))
    with pytest.raises(LLMConfigurationError, match="does not declare response_chains"):
        await llm.create_response("x", "y", Move, entity_key="move:a1", depth_override=2)


def test_bad_arguments() -> None:
    with pytest.raises(LLMConfigurationError, match="default_depth must be a whole number >= 0"):
        LLMClient("mock:sim", default_depth=-1)
    with pytest.raises(LLMConfigurationError, match="concurrency must be a whole number >= 1"):
        LLMClient("mock:sim", concurrency=0)
    with pytest.raises(LLMConfigurationError, match="unknown provider 'nowhere'"):
        LLMClient("nowhere:x")
