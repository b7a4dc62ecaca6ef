"""Seed 004 on ``llmplex.compat.util_llm``: the ``OpenAIAdapter`` (PhaseConfig, environment, Responses API) and errors.

Every test names the seed section it covers; the provider is the fault-injecting
OpenAI-wire server, reached through ``OPENAI_BASE_URL`` as ``AsyncOpenAI()`` did.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import pytest

import llmplex
from llmplex.compat.util_llm import (
    AdapterResponse,
    LLMClient,
    LLMError,
    LLMIncompleteError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMTimeoutError,
    OpenAIAdapter,
    ResponseUsage,
)
from tests.compat.util_helpers import KEY, IntentionResponse, adapter, characters, env, intention, posts
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer

__all__ = ["env"]


async def test_execute_speaks_the_responses_api_to_the_url_in_the_environment(env: FaultServer) -> None:
    """Seed 004 § Batch Execution Flow (adapter.execute) / § File Structure (OpenAIAdapter over AsyncOpenAI()):
    key from OPENAI_API_KEY, endpoint from OPENAI_BASE_URL (not api.openai.com), Responses API all the same."""
    env.enqueue(intention("resp_42", "trade", fx.TokenUsage(input_tokens=120, output_tokens=30, reasoning_tokens=8)))
    answer = await adapter(max_completion=256).execute(
        instructions="You are Bob.", input_data="Bob sees Alice.", schema=IntentionResponse, previous_response_id="r0"
    )
    assert answer == AdapterResponse(
        parsed=IntentionResponse(intention="trade", reasoning="because"),
        response_id="resp_42",
        usage=ResponseUsage(input_tokens=120, output_tokens=30, reasoning_tokens=8, cached_tokens=0, total_tokens=150),
        debug=answer.debug,
    )
    assert answer.debug is not None and answer.debug.model
    assert answer.usage.total_tokens == 150
    request = env.requests[0]
    assert request.path == "/v1/responses" and request.headers["authorization"] == f"Bearer {KEY}"
    body = posts(env)[0]
    assert body["model"] == "gpt-test" and body["instructions"] == "You are Bob."
    assert body["input"] == [{"type": "message", "role": "user", "content": "Bob sees Alice."}]
    assert body["previous_response_id"] == "r0" and body["max_output_tokens"] == 256
    assert body["text"]["format"]["type"] == "json_schema" and body["text"]["format"]["name"] == "IntentionResponse"


async def test_phase_config_is_read_by_attribute(env: FaultServer) -> None:
    """Seed 004 § Configuration Integration (PhaseConfig per phase): optional reasoning and sampling settings."""

    @dataclass
    class ReasoningPhase:
        model: str = "o4-mini"
        max_completion: int = 2000
        timeout: float = 30.0
        max_retries: int = 1
        is_reasoning: bool = True
        reasoning_effort: str = "low"
        reasoning_summary: str | None = None
        truncation: str = "auto"
        response_chain_depth: int = 2

    env.enqueue(intention("r1"), intention("r2"))
    await OpenAIAdapter(ReasoningPhase()).execute("i", "d", IntentionResponse)
    await OpenAIAdapter(ReasoningPhase(is_reasoning=False)).execute("i", "d", IntentionResponse)
    first, second = posts(env)
    assert first["reasoning"] == {"effort": "low"} and first["truncation"] == "auto" and first["model"] == "o4-mini"
    assert "reasoning" not in second and "temperature" not in first
    config = ReasoningPhase()
    client = LLMClient(adapter=OpenAIAdapter(config), entities=[], default_depth=config.response_chain_depth)
    assert client.default_depth == 2


def test_bad_phase_config_is_a_configuration_error() -> None:
    """Seed 004 § Configuration Integration, bad input: what is wrong and how to fix it."""
    with pytest.raises(llmplex.LLMConfigurationError, match=r"PhaseConfig\.model"):
        OpenAIAdapter(object())
    with pytest.raises(llmplex.LLMConfigurationError, match=r"PhaseConfig\.max_retries must be a whole number"):
        adapter(max_retries=-1)
    with pytest.raises(llmplex.LLMConfigurationError, match=r"PhaseConfig\.timeout"):
        adapter(timeout="soon")


async def test_max_retries_retries_after_the_first_request(env: FaultServer) -> None:
    """Seed 004 § create_response Raises (LLMRateLimitError after all retries) / § create_batch note."""
    env.enqueue(*[Fault.rate_limit(retry_after_ms=1)] * 3, intention("never"))
    with pytest.raises(LLMRateLimitError) as caught:
        await adapter(max_retries=2).execute("i", "d", IntentionResponse)
    assert caught.value.attempts == 3 and env.request_count == 3
    env.reset()
    env.enqueue(Fault.rate_limit(retry_after_ms=1), intention("resp_ok"))
    assert (await adapter(max_retries=1).execute("i", "d", IntentionResponse)).response_id == "resp_ok"


async def test_timeout_is_per_request_and_retried(env: FaultServer) -> None:
    """Seed 004 § create_response Raises (LLMTimeoutError: timeout after all retries)."""
    env.enqueue(Fault.hang(3), Fault.hang(3))
    with pytest.raises(LLMTimeoutError) as caught:
        await adapter(timeout=0.3, max_retries=1).execute("i", "d", IntentionResponse)
    # The client may give up before a loaded server's handler thread has read the last request.
    assert env.wait_for_requests(2, timeout=10)
    assert caught.value.attempts == 2 and env.request_count == 2


async def test_refusal_and_truncation_raise_their_errors(env: FaultServer) -> None:
    """Seed 004 § create_response Raises (LLMRefusalError, LLMIncompleteError) / § Error Handling example."""
    env.enqueue(Fault.json(200, fx.response_refusal("I can't role-play that.")))
    with pytest.raises(LLMRefusalError) as refused:
        await adapter().execute("i", "d", IntentionResponse)
    assert refused.value.refusal_message == "I can't role-play that." == refused.value.refusal
    env.enqueue(Fault.json(200, fx.response_incomplete()))
    with pytest.raises(LLMIncompleteError) as cut:
        await adapter().execute("i", "d", IntentionResponse)
    assert cut.value.reason == "max_output_tokens"  # the Responses API's incomplete_details.reason


async def test_the_error_handling_example_runs_unchanged(env: FaultServer) -> None:
    """Seed 004 § Error Handling (in create_response: fallback per error class; in create_batch: LLMError items)."""
    client = LLMClient(adapter(max_retries=0), characters("bob"))
    outcomes = []
    env.enqueue(Fault.json(200, fx.response_refusal()), Fault.json(200, fx.response_incomplete()), Fault.rate_limit())
    for _ in range(3):
        try:
            await client.create_response("s", "c", IntentionResponse, entity_key="intention:bob")
        except LLMRefusalError as e:
            outcomes.append(f"refused: {e.refusal_message}")
        except LLMIncompleteError as e:
            outcomes.append(f"truncated: {e.reason}")
        except LLMError as e:
            outcomes.append(type(e).__name__)
    assert outcomes == [
        "refused: I'm sorry, I can't help with that.",
        "truncated: max_output_tokens",
        "LLMRateLimitError",
    ]


async def test_a_deleted_response_cannot_be_continued(env: FaultServer) -> None:
    """Seed 004 integration test_deleted_response_not_usable: an unknown previous_response_id is an LLMError."""
    missing = fx.error_body("Previous response with id 'resp_gone' not found.", "invalid_request_error")
    env.enqueue(Fault.json(404, missing))
    with pytest.raises(LLMError, match="not found"):
        await adapter().execute("i", "d", IntentionResponse, previous_response_id="resp_gone")


async def test_delete_response_deletes_the_stored_response_and_failures_are_only_logged(
    env: FaultServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Seed 004 integration test_sliding_window_eviction (the evicted response is deleted at the provider)."""
    openai = adapter()
    await openai.delete_response("resp_old")
    assert [(r.method, r.path) for r in env.requests] == [("DELETE", "/v1/responses/resp_old")]
    env.stop()
    with caplog.at_level(logging.WARNING, logger="llmplex"):
        await openai.delete_response("resp_older")
    assert "could not delete response resp_older" in caplog.text


def test_no_secret_in_reprs(env: FaultServer) -> None:
    """Seed 004 § OpenAIAdapter, secrets: the key from the environment never shows."""
    openai = adapter()
    assert KEY not in repr(openai) and KEY not in repr(openai.client)
    assert "gpt-test" in repr(openai)


async def test_an_application_adapter_without_llmplex_still_works() -> None:
    """Seed 004 § LLMClient.__init__ (adapter: OpenAIAdapter, etc.): any object with execute/delete_response."""

    class Canned:
        async def execute(self, **kwargs: Any) -> AdapterResponse[IntentionResponse]:
            parsed = kwargs["schema"](intention="canned", reasoning="-")
            return AdapterResponse("resp_canned", parsed, ResponseUsage(1, 1))

        async def delete_response(self, response_id: str) -> None:
            raise AssertionError("depth 0 never evicts")

    world = characters("bob")
    result = await LLMClient(Canned(), world).create_response("s", "c", IntentionResponse, "intention:bob")
    assert result.intention == "canned" and world[0]["_openai"]["usage"]["total_requests"] == 1
