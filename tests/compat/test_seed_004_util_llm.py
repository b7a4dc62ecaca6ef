"""Seed 004 (util_llm's ``LLMClient``) on ``llmplex.compat.util_llm``: client, chains, usage, batches.

Every test names the seed section it covers. Requests go to the fault-injecting
OpenAI-wire server (Responses API) found through ``OPENAI_BASE_URL``, or to an
application-style fake adapter where the seed's unit tests use a mock adapter.
The adapter itself and the errors are in ``test_seed_004_util_llm_adapter.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from llmplex.compat.util_llm import (
    LLMClient,
    LLMError,
    LLMRateLimitError,
    LLMRequest,
    ResponseChainManager,
)
from llmplex.facade import RateLimitWarning
from tests.compat.util_helpers import (
    FakeAdapter,
    IntentionResponse,
    adapter,
    characters,
    deleted,
    env,
    intention,
    posts,
)
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer

__all__ = ["env"]


def request(entity: str | None, text: str = "ctx", **options: Any) -> LLMRequest:
    key = None if entity is None else f"intention:{entity}"
    return LLMRequest("You are a character.", text, IntentionResponse, entity_key=key, **options)


# --- LLMClient.__init__ -----------------------------------------------------------------


def test_client_init_creates_chain_manager_and_stores_default_depth() -> None:
    """Seed 004 § LLMClient.__init__ (test_client_init_creates_chain_manager / _stores_default_depth / _empty)."""
    world = characters("bob", "elvira")
    client = LLMClient(adapter=FakeAdapter(), entities=world, default_depth=2)
    assert isinstance(client.chain_manager, ResponseChainManager)
    assert client.chain_manager.entities == {"bob": world[0], "elvira": world[1]}
    assert client.chain_manager.entities["bob"] is world[0]  # references, not copies
    assert client.default_depth == 2
    assert LLMClient(FakeAdapter(), []).default_depth == 0


# --- create_response --------------------------------------------------------------------


async def test_create_response_with_entity_key_uses_the_chain_and_accumulates_usage(env: FaultServer) -> None:
    """Seed 004 § create_response (behaviour 1-5) / § Chain Storage in Entities / § Usage Accumulation."""
    world = characters("bob")
    client = LLMClient(adapter(), world, default_depth=2)
    for n in range(3):
        env.enqueue(intention(f"resp_{n}", "walk", fx.TokenUsage(input_tokens=100, output_tokens=7)))
        result = await client.create_response("You are Bob.", f"turn {n}", IntentionResponse, "intention:bob")
        assert result == IntentionResponse(intention="walk", reasoning="because")
    assert [body.get("previous_response_id") for body in posts(env)] == [None, "resp_0", "resp_1"]
    assert sorted(world[0]["_openai"]) == ["intention_chain", "usage"]
    assert world[0]["_openai"]["intention_chain"] == ["resp_1", "resp_2"]
    usage = {"total_input_tokens": 300, "total_output_tokens": 21, "total_requests": 3, "total_tokens": 321}
    assert world[0]["_openai"]["usage"].items() >= usage.items()
    assert deleted(env) == ["resp_0"]
    assert "_llm" not in world[0]


async def test_create_response_without_entity_key_touches_no_entity(env: FaultServer) -> None:
    """Seed 004 § create_response (entity_key None: independent request, no chain interaction)."""
    world = characters("bob")
    env.enqueue(intention("resp_x"))
    client = LLMClient(adapter(), world, default_depth=3)
    assert await client.create_response("sys", "ctx", IntentionResponse) == IntentionResponse(
        intention="idle", reasoning="because"
    )
    assert "previous_response_id" not in posts(env)[0] and "_openai" not in world[0]


async def test_create_response_propagates_errors(env: FaultServer) -> None:
    """Seed 004 § Error Handling (in create_response: exceptions propagate to the caller)."""
    env.enqueue(Fault.json(400, fx.context_length_exceeded_error()))
    with pytest.raises(LLMError) as caught:
        await LLMClient(adapter(), characters("bob")).create_response("s", "c", IntentionResponse, "intention:bob")
    assert caught.value.status_code == 400  # type: ignore[attr-defined]


# --- create_batch -----------------------------------------------------------------------


async def test_batch_results_in_order_with_partial_failures() -> None:
    """Seed 004 § create_batch (same order; failures returned, not raised) / test_batch_partial_failure."""
    fake = FakeAdapter(fail_on=frozenset({"bad"}))
    results = await LLMClient(fake, characters("a", "b", "c")).create_batch(
        [request("a", "one"), request("b", "bad"), request("c", "three")]
    )
    assert [getattr(r, "intention", None) for r in results] == ["one", None, "three"]
    assert isinstance(results[1], LLMError)


async def test_batch_all_failure_and_empty(env: FaultServer) -> None:
    """Seed 004 § create_batch (test_batch_all_failure / test_batch_empty_requests) against the server."""
    env.enqueue(*[Fault.json(400, fx.context_length_exceeded_error())] * 2)
    client = LLMClient(adapter(), characters("a", "b"))
    results = await client.create_batch([request("a"), request("b")])
    assert len(results) == 2 and all(isinstance(r, LLMError) for r in results)
    assert await client.create_batch([]) == []


async def test_batch_runs_every_request_at_once_and_keeps_order() -> None:
    """Seed 004 § Batch Execution Flow (asyncio.gather: all in parallel) / test_batch_preserves_order."""
    fake = FakeAdapter(pause=0.05)
    world = characters(*[f"c{i}" for i in range(20)])
    client = LLMClient(fake, world, default_depth=1)
    results = await client.create_batch([request(f"c{i}", f"in{i}") for i in range(20)])
    assert [r.intention for r in results] == [f"in{i}" for i in range(20)]
    assert fake.most_in_flight == 20


async def test_batch_converts_unexpected_exceptions_to_llm_errors() -> None:
    """Seed 004 § Batch Execution Flow (_process_result: other exceptions become LLMError) / test_batch_all_failure."""
    fake = FakeAdapter(fail_on=frozenset({"bad"}))
    results = await LLMClient(fake, characters("a")).create_batch([request("a", "bad"), request(None, "good")])
    assert isinstance(results[0], LLMError) and "adapter bug on bad" in str(results[0])
    assert isinstance(results[0].cause, RuntimeError)
    assert results[1] == IntentionResponse(intention="good", reasoning="fake")


async def test_batch_chain_integration_with_a_mock_adapter() -> None:
    """Seed 004 § Batch Execution Flow / unit tests test_batch_uses_previous_response_id, _auto_confirm,
    _depth_override, _eviction_triggers_delete (the seed's mock-adapter tests, unchanged)."""
    fake = FakeAdapter()
    bob, alice = world = characters("bob", "alice")
    client = LLMClient(fake, world, default_depth=1)
    await client.create_batch([request("bob", "b1"), request("alice", "a1", depth_override=3)])
    (bob_1,), (alice_1,) = bob["_openai"]["intention_chain"], alice["_openai"]["intention_chain"]
    await client.create_batch([request("bob", "b2"), request("alice", "a2", depth_override=3)])
    previous = {call["input"]: call["previous_response_id"] for call in fake.calls}
    assert previous == {"b1": None, "a1": None, "b2": bob_1, "a2": alice_1}
    (bob_2,) = bob["_openai"]["intention_chain"]
    assert bob_2 != bob_1 and alice["_openai"]["intention_chain"][0] == alice_1
    assert len(alice["_openai"]["intention_chain"]) == 2
    assert fake.deleted == [bob_1]
    assert (
        bob["_openai"]["usage"].items()
        >= {"total_input_tokens": 20, "total_output_tokens": 4, "total_requests": 2}.items()
    )  # util_llm\'s later totals sit beside them


async def test_same_entity_in_one_batch_is_processed_in_order_last_wins(env: FaultServer) -> None:
    """Seed 004 integration test_batch_same_entity_sequential (last wins) / test_batch_parallel_chain_updates."""
    world = characters("bob", "alice")
    env.enqueue(*[intention(f"resp_{n}") for n in range(4)])
    client = LLMClient(adapter(), world, default_depth=5)
    await client.create_batch([request("bob", "b1"), request("alice", "a1"), request("bob", "b2"), request("alice")])
    bob_calls = [body for body in posts(env) if body["input"][0]["content"] in ("b1", "b2")]
    assert [c["input"][0]["content"] for c in bob_calls] == ["b1", "b2"]
    bob_chain = world[0]["_openai"]["intention_chain"]
    assert len(bob_chain) == 2 and bob_calls[1]["previous_response_id"] == bob_chain[0]
    assert len(world[1]["_openai"]["intention_chain"]) == 2
    assert world[0]["_openai"]["usage"]["total_requests"] == 2


async def test_chain_survives_partial_failure(env: FaultServer) -> None:
    """Seed 004 integration test_chain_survives_partial_failure: one request fails, the others update chains."""
    world = characters("bob", "alice")
    env.enqueue(intention("resp_ok"), Fault.json(400, fx.context_length_exceeded_error()))
    client = LLMClient(adapter(max_retries=0), world, default_depth=2)
    results = await client.create_batch([request("bob"), request("alice")])
    assert sum(isinstance(r, LLMError) for r in results) == 1
    chains = [entity.get("_openai", {}).get("intention_chain") for entity in world]
    assert chains.count(["resp_ok"]) == 1 and chains.count(None) == 1


async def test_batch_warns_when_rate_limits_were_hit(env: FaultServer, caplog: pytest.LogCaptureFixture) -> None:
    """Seed 004 § create_batch behaviour 4 (log a warning if rate limit hits occurred) / § Logging."""
    env.enqueue(Fault.rate_limit(retry_after_ms=1), intention("resp_1"))
    client = LLMClient(adapter(), characters("bob"))
    with pytest.warns(RateLimitWarning, match="1 rate-limit hits"):
        results = await client.create_batch([request("bob")])
    assert isinstance(results[0], IntentionResponse)
    assert "rate-limit hits" in caplog.text


async def test_a_rate_limit_after_all_retries_is_an_llm_error_in_the_batch(env: FaultServer) -> None:
    """Seed 004 § create_batch note: retry happens inside the adapter; LLMError means all attempts failed."""
    env.enqueue(*[Fault.rate_limit(retry_after_ms=1)] * 3)
    with pytest.warns(RateLimitWarning):
        (result,) = await LLMClient(adapter(max_retries=2), characters("bob")).create_batch([request("bob")])
    assert isinstance(result, LLMRateLimitError) and result.attempts == 3
    assert env.request_count == 3


# --- entities, keys and chains ----------------------------------------------------------


async def test_an_unknown_entity_gets_no_chain_and_the_request_is_still_sent(env: FaultServer) -> None:
    """Seed 004 § get_previous / § confirm / § Usage Accumulation (unknown entity: None, nothing recorded)."""
    world = characters("bob")
    env.enqueue(intention("resp_1", "ghostly"))
    client = LLMClient(adapter(), world, default_depth=2)
    result = await client.create_response("s", "c", IntentionResponse, entity_key="intention:ghost")
    assert result.intention == "ghostly" and env.request_count == 1
    assert "previous_response_id" not in posts(env)[0] and world == characters("bob")


async def test_a_legacy_state_file_continues_its_chain_and_its_usage(env: FaultServer) -> None:
    """Seed 004 § Chain Storage in Entities: an entity loaded from characters/bob.json continues where util_llm left."""
    bob = json.loads(
        """{"identity": {"id": "bob"}, "state": {},
            "_openai": {"intention_chain": ["resp_abc123", "resp_def456"], "memory_chain": ["resp_xyz789"],
                        "usage": {"total_input_tokens": 125000, "total_output_tokens": 8500, "total_requests": 42}}}"""
    )
    env.enqueue(intention("resp_new", usage=fx.TokenUsage(input_tokens=1000, output_tokens=50)))
    client = LLMClient(adapter(), [bob], default_depth=2)
    await client.create_response("s", "c", IntentionResponse, entity_key="intention:bob")
    assert posts(env)[0]["previous_response_id"] == "resp_def456"
    assert bob["_openai"]["intention_chain"] == ["resp_def456", "resp_new"]
    assert bob["_openai"]["memory_chain"] == ["resp_xyz789"]
    assert (
        bob["_openai"]["usage"].items()
        >= {"total_input_tokens": 126000, "total_output_tokens": 8550, "total_requests": 43}.items()
    )  # util_llm\'s later totals sit beside them
    assert deleted(env) == ["resp_abc123"]


async def test_depth_zero_reads_a_stored_chain_but_never_grows_it(env: FaultServer) -> None:
    """Seed 004 § Batch Execution Flow (get_previous whenever entity_key is set; confirm(depth=0) adds nothing)."""
    world = characters("bob")
    world[0]["_openai"] = {"intention_chain": ["resp_old"]}
    env.enqueue(intention("resp_1"), intention("resp_2"))
    client = LLMClient(adapter(), world)
    await client.create_response("s", "c", IntentionResponse, entity_key="intention:bob")
    await client.create_response("s", "c", IntentionResponse, entity_key="memory:bob")
    assert [body.get("previous_response_id") for body in posts(env)] == ["resp_old", None]
    assert world[0]["_openai"]["intention_chain"] == ["resp_old"] and "memory_chain" not in world[0]["_openai"]
    assert world[0]["_openai"]["usage"]["total_requests"] == 2 and deleted(env) == []


async def test_different_depth_per_entity(env: FaultServer) -> None:
    """Seed 004 § Usage Examples (Different Depth per Entity: depth_override=5 for Bob, default for Alice)."""
    world = characters("bob", "alice")
    env.enqueue(*[intention(f"resp_{n}") for n in range(12)])
    client = LLMClient(adapter(), world, default_depth=1)
    for _ in range(6):
        await client.create_batch([request("bob", depth_override=5), request("alice")])
    assert len(world[0]["_openai"]["intention_chain"]) == 5
    assert len(world[1]["_openai"]["intention_chain"]) == 1
    assert len(deleted(env)) == 1 + 5


def test_chain_manager_get_previous_and_confirm() -> None:
    """Seed 004 § ResponseChainManager (get_previous, confirm: depth 0, add, sliding window, unknown entity)."""
    world = characters("bob")
    manager = ResponseChainManager(world)
    assert manager.get_previous("intention:bob") is None
    assert manager.confirm("intention:bob", "resp_1", 0) is None and "_openai" not in world[0]
    assert manager.confirm("intention:bob", "resp_1", 2) is None
    assert world[0]["_openai"] == {"intention_chain": ["resp_1"]}
    assert manager.get_previous("intention:bob") == "resp_1"
    assert manager.confirm("intention:bob", "resp_2", 2) is None
    assert manager.confirm("intention:bob", "resp_3", 2) == "resp_1"
    assert world[0]["_openai"]["intention_chain"] == ["resp_2", "resp_3"]
    assert manager.get_previous("intention:ghost") is None and manager.confirm("intention:ghost", "r", 2) is None


def test_chain_manager_indexes_entities_and_skips_invalid(caplog: pytest.LogCaptureFixture) -> None:
    """Seed 004 § ResponseChainManager.__init__ (test_chain_manager_init_indexes_entities / _skips_invalid)."""
    world: list[dict[str, Any]] = [{"identity": {"id": "bob"}}, {"identity": {}}, {"name": "no identity"}]
    assert list(ResponseChainManager(world).entities) == ["bob"]
    assert "skipped 2 entities without an id" in caplog.text


@pytest.mark.parametrize(
    ("key", "parsed"),
    [
        ("intention:bob", ("bob", "intention")),
        ("memory:elvira", ("elvira", "memory")),
        ("resolution:tavern", ("tavern", "resolution")),
        ("narrative:forest:clearing", ("forest:clearing", "narrative")),
    ],
)
def test_entity_key_parsing(key: str, parsed: tuple[str, str]) -> None:
    """Seed 004 § Entity Key Parsing / § Entity Key Format (test_parse_key_intention / _memory / _resolution)."""
    assert ResponseChainManager([])._parse_key(key) == parsed


def test_one_entity_keeps_one_chain_per_phase() -> None:
    """Seed 004 § Entity Key Format (a single entity has different chains for different phases)."""
    tavern: dict[str, Any] = {"identity": {"id": "tavern"}}
    manager = ResponseChainManager([tavern])
    manager.confirm("resolution:tavern", "resp_111", 2)
    manager.confirm("resolution:tavern", "resp_222", 2)
    manager.confirm("narrative:tavern", "resp_333", 2)
    assert tavern["_openai"] == {"resolution_chain": ["resp_111", "resp_222"], "narrative_chain": ["resp_333"]}
    assert manager.get_previous("narrative:tavern") == "resp_333"


def test_llm_request_defaults_and_override() -> None:
    """Seed 004 § LLMRequest (test_request_defaults / test_request_with_override)."""
    plain = LLMRequest(instructions="i", input_data="d", schema=IntentionResponse)
    assert (plain.entity_key, plain.depth_override) == (None, None)
    assert LLMRequest("i", "d", IntentionResponse, "intention:bob", 5).depth_override == 5


async def test_a_corrupt_chain_in_a_state_file_is_a_clear_error(env: FaultServer) -> None:
    """Seed 004 § Chain Storage in Entities, hostile input: a chain that is not a list names the key to fix."""
    world = characters("bob")
    world[0]["_openai"] = {"intention_chain": "resp_1"}
    (result,) = await LLMClient(adapter(), world, default_depth=2).create_batch([request("bob")])
    assert isinstance(result, LLMError) and "'intention_chain'" in str(result) and "list" in str(result)
    assert env.request_count == 0


async def test_a_key_without_a_chain_name_counts_usage_only() -> None:
    """Seed 004 § Entity Key Format, hostile input: ``"bob"`` (no ``chain:``) keeps no chain but counts usage."""
    fake = FakeAdapter()
    world = characters("bob")
    await LLMClient(fake, world, default_depth=2).create_response("s", "c", IntentionResponse, entity_key="bob")
    assert list(world[0]["_openai"]) == ["usage"]
    assert (
        world[0]["_openai"]["usage"].items()
        >= {"total_input_tokens": 10, "total_output_tokens": 2, "total_requests": 1}.items()
    )
    assert fake.calls[0]["previous_response_id"] is None
    assert ResponseChainManager(world).get_previous("bob") is None


async def test_corrupt_usage_totals_are_a_clear_error() -> None:
    """Seed 004 § Usage Accumulation, hostile input: totals that are not whole numbers name the key to fix."""
    for usage in ("lots", {"total_requests": "3"}):
        world = characters("bob")
        world[0]["_openai"] = {"usage": usage}
        with pytest.raises(LLMError, match=r"\['usage'\] must be a dict of whole-number totals"):
            await LLMClient(FakeAdapter(), world).create_response("s", "c", IntentionResponse, "intention:bob")
