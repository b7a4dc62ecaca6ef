"""Issue 23 item 3: util_llm (seed 004) exactly: its "existing" types and errors, and every test its "Test
Coverage" section lists, each as ``test_item_3_<the seed's name>``.

The unit tests use a mock adapter, as the seed says; the integration tests (the
seed's "real API") run against a stateful fake of the Responses API on
127.0.0.1 (tests/compat/fake_responses_api.py) reached through
``OPENAI_BASE_URL``, the way ``AsyncOpenAI()`` finds its endpoint.
"""

from __future__ import annotations

import asyncio
import logging
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

import pytest

from llmplex.compat.util_llm import (
    AdapterResponse,
    LLMClient,
    LLMConfigurationError,
    LLMError,
    LLMIncompleteError,
    LLMRefusalError,
    LLMRequest,
    OpenAIAdapter,
    ResponseChainManager,
    ResponseDebugInfo,
    ResponseUsage,
)
from tests.compat import util_helpers
from tests.compat.fake_responses_api import FakeResponsesAPI
from tests.compat.util_helpers import IntentionResponse, env
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer

__all__ = ["env"]

KEY = "sk-item3-0123456789abcdef"


@dataclass
class PhaseConfig(util_helpers.PhaseConfig):
    """The helpers' phase settings with no retries (these tests count requests) and shorter answers."""

    max_completion: int = 200
    max_retries: int = 0


def characters(*ids: str) -> list[dict[str, Any]]:
    return [{"identity": {"id": i}, "state": {}} for i in ids]


class MockAdapter:
    """util_llm's adapter interface, scripted: ``execute`` and ``delete_response`` coroutines."""

    def __init__(self, fail_on: tuple[str, ...] = ()) -> None:
        self.fail_on = fail_on
        self.calls: list[dict[str, Any]] = []
        self.deleted: list[str] = []

    async def execute(
        self, instructions: str, input_data: str, schema: type[Any], previous_response_id: str | None = None
    ) -> AdapterResponse[Any]:
        self.calls.append({"input": input_data, "previous_response_id": previous_response_id})
        number = len(self.calls)
        await asyncio.sleep(0)
        if input_data in self.fail_on:
            raise LLMError(f"the model failed on {input_data}")
        return AdapterResponse(
            response_id=f"resp_{number}",
            parsed=schema(intention=input_data, reasoning="mock"),
            usage=ResponseUsage(input_tokens=10, output_tokens=2),
        )

    async def delete_response(self, response_id: str) -> bool:
        self.deleted.append(response_id)
        return True


def request(input_data: str, entity_key: str | None = None, depth_override: int | None = None) -> LLMRequest:
    return LLMRequest(
        instructions="You are a character.",
        input_data=input_data,
        schema=IntentionResponse,
        entity_key=entity_key,
        depth_override=depth_override,
    )


# --- the "existing" types and errors ------------------------------------------------------


def test_item_3_response_usage_has_the_five_fields() -> None:
    assert [f.name for f in fields(ResponseUsage)] == [
        "input_tokens",
        "output_tokens",
        "reasoning_tokens",
        "cached_tokens",
        "total_tokens",
    ]
    assert ResponseUsage(input_tokens=7, output_tokens=3).total_tokens == 0  # as util_llm: the API reports it
    assert ResponseUsage(1, 2, 3, 4, 99).total_tokens == 99


def test_item_3_adapter_response_fields_and_debug_info_from_the_wire(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [f.name for f in fields(AdapterResponse)] == ["response_id", "parsed", "usage", "debug"]
    assert [f.name for f in fields(ResponseDebugInfo)] == ["model", "created_at", "service_tier", "reasoning_summary"]
    with FakeResponsesAPI() as api:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", api.url)
        answer = asyncio.run(OpenAIAdapter(PhaseConfig()).execute("i", "hello", IntentionResponse))
    assert answer.response_id == "resp_1" and answer.parsed.intention == "hello"
    assert answer.usage == ResponseUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    assert answer.debug == ResponseDebugInfo(model="gpt-test", created_at=1_700_000_000, service_tier="default")
    with FakeResponsesAPI(reasoning_summary="Bob weighs his options.") as api:
        monkeypatch.setenv("OPENAI_BASE_URL", api.url)
        reasoned = asyncio.run(OpenAIAdapter(PhaseConfig()).execute("i", "hello", IntentionResponse))
    assert reasoned.debug is not None and reasoned.debug.reasoning_summary == ["Bob weighs his options."]


async def test_item_3_the_error_attributes_the_seed_reads(env: FaultServer) -> None:
    env.enqueue(Fault.json(200, fx.response_refusal("I can't help with that.")))
    env.enqueue(Fault.json(200, fx.response_incomplete()))
    adapter = OpenAIAdapter(PhaseConfig())
    with pytest.raises(LLMRefusalError) as refused:
        await adapter.execute("i", "d", IntentionResponse)
    assert refused.value.refusal_message == "I can't help with that."
    with pytest.raises(LLMIncompleteError) as cut:
        await adapter.execute("i", "d", IntentionResponse)
    assert cut.value.reason == "max_output_tokens"


def test_item_3_delete_response_is_true_or_false_and_never_raises(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeResponsesAPI() as api:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", api.url)
        adapter = OpenAIAdapter(PhaseConfig())
        stored = asyncio.run(adapter.execute("i", "keep me", IntentionResponse)).response_id
        assert asyncio.run(adapter.delete_response(stored)) is True
        with caplog.at_level(logging.WARNING, logger="llmplex"):
            assert asyncio.run(adapter.delete_response(stored)) is False  # already gone: 404
            assert asyncio.run(adapter.delete_response("resp_never")) is False
    assert "resp_never" in caplog.text
    with caplog.at_level(logging.WARNING, logger="llmplex"):
        assert asyncio.run(adapter.delete_response("resp_server_down")) is False  # the server is stopped
    assert "could not delete response resp_server_down" in caplog.text and KEY not in caplog.text


def test_item_3_a_missing_openai_api_key_fails_when_the_adapter_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMConfigurationError, match="OPENAI_API_KEY"):
        OpenAIAdapter(PhaseConfig())
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # a local endpoint needs no key in llmplex
    with pytest.raises(LLMConfigurationError, match="OPENAI_API_KEY"):
        OpenAIAdapter(PhaseConfig())  # but AsyncOpenAI() wanted one all the same


# --- Unit tests (mock adapter): LLMClient initialization -----------------------------------


def test_item_3_client_init_creates_chain_manager() -> None:
    client = LLMClient(adapter=MockAdapter(), entities=characters("bob", "alice"), default_depth=0)
    assert isinstance(client.chain_manager, ResponseChainManager)
    assert set(client.chain_manager.entities) == {"bob", "alice"}


def test_item_3_client_init_stores_default_depth() -> None:
    assert LLMClient(adapter=MockAdapter(), entities=[], default_depth=3).default_depth == 3


def test_item_3_client_init_empty_entities() -> None:
    assert LLMClient(adapter=MockAdapter(), entities=[]).chain_manager.entities == {}


# --- Single request (create_response) ------------------------------------------------------


async def test_item_3_create_response_success() -> None:
    result = await LLMClient(MockAdapter(), characters("bob")).create_response("i", "wave", IntentionResponse)
    assert result == IntentionResponse(intention="wave", reasoning="mock")


async def test_item_3_create_response_with_entity_key() -> None:
    bob = characters("bob")
    adapter = MockAdapter()
    client = LLMClient(adapter, bob, default_depth=2)
    await client.create_response("i", "one", IntentionResponse, entity_key="intention:bob")
    await client.create_response("i", "two", IntentionResponse, entity_key="intention:bob")
    assert adapter.calls[1]["previous_response_id"] == "resp_1"
    assert bob[0]["_openai"]["intention_chain"] == ["resp_1", "resp_2"]
    assert bob[0]["_openai"]["usage"]["total_requests"] == 2


async def test_item_3_create_response_without_entity_key() -> None:
    bob = characters("bob")
    adapter = MockAdapter()
    await LLMClient(adapter, bob, default_depth=2).create_response("i", "one", IntentionResponse)
    assert "_openai" not in bob[0] and adapter.calls[0]["previous_response_id"] is None


async def test_item_3_create_response_propagates_errors() -> None:
    with pytest.raises(LLMError, match="failed on bad"):
        await LLMClient(MockAdapter(fail_on=("bad",)), []).create_response("i", "bad", IntentionResponse)


# --- Batch execution (create_batch) --------------------------------------------------------


async def test_item_3_batch_all_success() -> None:
    results = await LLMClient(MockAdapter(), []).create_batch([request("a"), request("b")])
    assert all(isinstance(r, IntentionResponse) for r in results)


async def test_item_3_batch_partial_failure() -> None:
    results = await LLMClient(MockAdapter(fail_on=("b",)), []).create_batch([request("a"), request("b")])
    assert isinstance(results[0], IntentionResponse) and isinstance(results[1], LLMError)


async def test_item_3_batch_all_failure() -> None:
    results = await LLMClient(MockAdapter(fail_on=("a", "b")), []).create_batch([request("a"), request("b")])
    assert all(isinstance(r, LLMError) for r in results)


async def test_item_3_batch_empty_requests() -> None:
    assert await LLMClient(MockAdapter(), []).create_batch([]) == []


async def test_item_3_batch_preserves_order() -> None:
    results = await LLMClient(MockAdapter(), []).create_batch([request(str(n)) for n in range(8)])
    assert [r.intention for r in results] == [str(n) for n in range(8)]


# --- Chain integration ----------------------------------------------------------------------


async def test_item_3_batch_uses_previous_response_id() -> None:
    bob = characters("bob")
    bob[0]["_openai"] = {"intention_chain": ["resp_prev"]}
    adapter = MockAdapter()
    await LLMClient(adapter, bob, default_depth=2).create_batch([request("x", "intention:bob")])
    assert adapter.calls[0]["previous_response_id"] == "resp_prev"


async def test_item_3_batch_auto_confirm() -> None:
    bob = characters("bob")
    await LLMClient(MockAdapter(), bob, default_depth=2).create_batch([request("x", "intention:bob")])
    assert bob[0]["_openai"]["intention_chain"] == ["resp_1"]


async def test_item_3_batch_depth_override() -> None:
    bob, alice = characters("bob", "alice")
    bob["_openai"] = {"intention_chain": ["old_bob"]}
    alice["_openai"] = {"intention_chain": ["old_alice"]}
    client = LLMClient(MockAdapter(), [bob, alice], default_depth=3)
    await client.create_batch([request("x", "intention:bob", depth_override=1), request("y", "intention:alice")])
    assert bob["_openai"]["intention_chain"] == ["resp_1"]
    assert alice["_openai"]["intention_chain"] == ["old_alice", "resp_2"]


async def test_item_3_batch_eviction_triggers_delete() -> None:
    bob = characters("bob")
    bob[0]["_openai"] = {"intention_chain": ["resp_old"]}
    adapter = MockAdapter()
    await LLMClient(adapter, bob, default_depth=1).create_batch([request("x", "intention:bob")])
    assert adapter.deleted == ["resp_old"]


# --- Usage accumulation -------------------------------------------------------------------


async def test_item_3_usage_accumulated_per_entity() -> None:
    bob, alice = characters("bob", "alice")
    await LLMClient(MockAdapter(), [bob, alice]).create_batch([request("x", "intention:bob")])
    assert (
        bob["_openai"]["usage"].items()
        >= {"total_input_tokens": 10, "total_output_tokens": 2, "total_requests": 1}.items()
    )  # util_llm\'s later totals sit beside them
    assert "_openai" not in alice


async def test_item_3_usage_creates_openai_section() -> None:
    bob = characters("bob")
    await LLMClient(MockAdapter(), bob).create_response("i", "x", IntentionResponse, entity_key="memory:bob")
    assert "usage" in bob[0]["_openai"]


async def test_item_3_usage_multiple_requests() -> None:
    bob = characters("bob")
    await LLMClient(MockAdapter(), bob).create_batch([request(str(n), "intention:bob") for n in range(3)])
    assert (
        bob[0]["_openai"]["usage"].items()
        >= {"total_input_tokens": 30, "total_output_tokens": 6, "total_requests": 3}.items()
    )  # util_llm\'s later totals sit beside them


# --- ResponseChainManager -----------------------------------------------------------------


def test_item_3_chain_manager_init_indexes_entities() -> None:
    bob, alice = characters("bob", "alice")
    manager = ResponseChainManager([bob, alice])
    assert manager.entities["bob"] is bob and manager.entities["alice"] is alice


def test_item_3_chain_manager_init_skips_invalid() -> None:
    manager = ResponseChainManager([{"state": {}}, {"identity": {}}, *characters("bob")])
    assert list(manager.entities) == ["bob"]


def test_item_3_get_previous_empty_chain() -> None:
    assert ResponseChainManager(characters("bob")).get_previous("intention:bob") is None


def test_item_3_get_previous_with_chain() -> None:
    bob = characters("bob")
    bob[0]["_openai"] = {"intention_chain": ["r1", "r2"]}
    assert ResponseChainManager(bob).get_previous("intention:bob") == "r2"


def test_item_3_get_previous_unknown_entity() -> None:
    assert ResponseChainManager(characters("bob")).get_previous("intention:nobody") is None


def test_item_3_confirm_depth_zero() -> None:
    bob = characters("bob")
    assert ResponseChainManager(bob).confirm("intention:bob", "r1", 0) is None
    assert "_openai" not in bob[0]


def test_item_3_confirm_adds_to_chain() -> None:
    bob = characters("bob")
    assert ResponseChainManager(bob).confirm("intention:bob", "r1", 2) is None
    assert bob[0]["_openai"]["intention_chain"] == ["r1"]


def test_item_3_confirm_sliding_window() -> None:
    bob = characters("bob")
    manager = ResponseChainManager(bob)
    manager.confirm("intention:bob", "r1", 2)
    manager.confirm("intention:bob", "r2", 2)
    assert manager.confirm("intention:bob", "r3", 2) == "r1"
    assert bob[0]["_openai"]["intention_chain"] == ["r2", "r3"]


def test_item_3_confirm_creates_openai_section() -> None:
    bob = characters("bob")
    ResponseChainManager(bob).confirm("memory:bob", "r1", 1)
    assert bob[0]["_openai"] == {"memory_chain": ["r1"]}


def test_item_3_confirm_unknown_entity() -> None:
    assert ResponseChainManager(characters("bob")).confirm("intention:nobody", "r1", 2) is None


def test_item_3_parse_key_intention() -> None:
    assert ResponseChainManager([])._parse_key("intention:bob") == ("bob", "intention")


def test_item_3_parse_key_memory() -> None:
    assert ResponseChainManager([])._parse_key("memory:elvira") == ("elvira", "memory")


def test_item_3_parse_key_resolution() -> None:
    assert ResponseChainManager([])._parse_key("resolution:tavern") == ("tavern", "resolution")


# --- LLMRequest -----------------------------------------------------------------------------


def test_item_3_request_defaults() -> None:
    made = LLMRequest(instructions="i", input_data="d", schema=IntentionResponse)
    assert made.entity_key is None and made.depth_override is None


def test_item_3_request_with_override() -> None:
    assert request("d", "intention:bob", depth_override=5).depth_override == 5


# --- Integration tests (the fake Responses API) ----------------------------------------------


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeResponsesAPI]:
    with FakeResponsesAPI() as fake:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        yield fake


def retrieve(api: FakeResponsesAPI, response_id: str) -> int:
    try:
        with urllib.request.urlopen(f"{api.url}/responses/{response_id}") as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code


async def test_item_3_sliding_window_eviction(api: FakeResponsesAPI) -> None:
    bob = characters("bob")
    client = LLMClient(OpenAIAdapter(PhaseConfig()), bob, default_depth=2)
    for text in ("one", "two", "three"):
        await client.create_response("i", text, IntentionResponse, entity_key="intention:bob")
    assert bob[0]["_openai"]["intention_chain"] == ["resp_2", "resp_3"]
    assert retrieve(api, "resp_1") == 404 and retrieve(api, "resp_2") == 200


async def test_item_3_chain_context_preserved(api: FakeResponsesAPI) -> None:
    client = LLMClient(OpenAIAdapter(PhaseConfig()), characters("bob"), default_depth=2)
    await client.create_response("i", "My name is Zed.", IntentionResponse, entity_key="memory:bob")
    answer = await client.create_response("i", "What is my name?", IntentionResponse, entity_key="memory:bob")
    assert "Zed" in answer.reasoning


async def test_item_3_deleted_response_not_usable(api: FakeResponsesAPI) -> None:
    adapter = OpenAIAdapter(PhaseConfig())
    first = await adapter.execute("i", "hello", IntentionResponse)
    assert await adapter.delete_response(first.response_id) is True
    with pytest.raises(LLMError, match="not found"):
        await adapter.execute("i", "again", IntentionResponse, previous_response_id=first.response_id)


async def test_item_3_independent_requests_no_context(api: FakeResponsesAPI) -> None:
    client = LLMClient(OpenAIAdapter(PhaseConfig()), characters("bob"), default_depth=0)
    await client.create_response("i", "My name is Zed.", IntentionResponse, entity_key="memory:bob")
    answer = await client.create_response("i", "What is my name?", IntentionResponse, entity_key="memory:bob")
    assert "Zed" not in answer.reasoning
    assert all("previous_response_id" not in body for body in api.posts())


async def test_item_3_batch_parallel_chain_updates(api: FakeResponsesAPI) -> None:
    bob, alice = characters("bob", "alice")
    client = LLMClient(OpenAIAdapter(PhaseConfig()), [bob, alice], default_depth=2)
    results = await client.create_batch([request("b", "intention:bob"), request("a", "intention:alice")])
    assert [r.intention for r in results] == ["b", "a"]
    assert len(bob["_openai"]["intention_chain"]) == len(alice["_openai"]["intention_chain"]) == 1
    assert bob["_openai"]["intention_chain"] != alice["_openai"]["intention_chain"]


async def test_item_3_batch_same_entity_sequential(api: FakeResponsesAPI) -> None:
    bob = characters("bob")
    client = LLMClient(OpenAIAdapter(PhaseConfig()), bob, default_depth=2)
    results = await client.create_batch([request("first", "intention:bob"), request("second", "intention:bob")])
    assert results[1].reasoning == "first | second"  # the second continued the first
    assert bob[0]["_openai"]["intention_chain"] == ["resp_1", "resp_2"]


async def test_item_3_usage_persisted_in_entity(api: FakeResponsesAPI) -> None:
    bob = characters("bob")
    client = LLMClient(OpenAIAdapter(PhaseConfig()), bob, default_depth=2)
    await client.create_response("i", "one", IntentionResponse, entity_key="intention:bob")
    await client.create_response("i", "two", IntentionResponse, entity_key="intention:bob")
    assert (
        bob[0]["_openai"]["usage"].items()
        >= {"total_input_tokens": 30, "total_output_tokens": 10, "total_requests": 2}.items()
    )  # util_llm\'s later totals sit beside them


async def test_item_3_chain_survives_partial_failure(api: FakeResponsesAPI) -> None:
    bob, alice = characters("bob", "alice")
    client = LLMClient(OpenAIAdapter(PhaseConfig()), [bob, alice], default_depth=2)
    results = await client.create_batch([request("FAIL", "intention:bob"), request("fine", "intention:alice")])
    assert isinstance(results[0], LLMError) and isinstance(results[1], IntentionResponse)
    assert "intention_chain" not in bob.get("_openai", {}) and len(alice["_openai"]["intention_chain"]) == 1


async def test_item_3_empty_batch(api: FakeResponsesAPI) -> None:
    assert await LLMClient(OpenAIAdapter(PhaseConfig()), characters("bob")).create_batch([]) == []
    assert api.requests == []


# --- the seed's Internal Design helpers, which util_llm's own tests may call -----------------


def test_item_3_internal_accumulate_usage_and_process_result_as_the_seed_writes_them() -> None:
    bob = characters("bob")
    client = LLMClient(MockAdapter(), bob)
    client._accumulate_usage("intention:bob", ResponseUsage(input_tokens=125, output_tokens=8))
    client._accumulate_usage("memory:bob", ResponseUsage(input_tokens=5, output_tokens=2))
    client._accumulate_usage("intention:nobody", ResponseUsage(input_tokens=1, output_tokens=1))
    assert (
        bob[0]["_openai"]["usage"].items()
        >= {"total_input_tokens": 130, "total_output_tokens": 10, "total_requests": 2}.items()
    )  # util_llm\'s later totals sit beside them
    answer = AdapterResponse(
        response_id="r", parsed=IntentionResponse(intention="x", reasoning="y"), usage=ResponseUsage()
    )
    assert client._process_result(request("x"), answer) == IntentionResponse(intention="x", reasoning="y")
    failure = LLMError("known")
    assert client._process_result(request("x"), failure) is failure
    wrapped = client._process_result(request("x"), KeyError("surprise"))
    assert isinstance(wrapped, LLMError) and str(wrapped) == "Unexpected error: 'surprise'"
