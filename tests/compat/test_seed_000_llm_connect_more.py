"""Seed 000 (llm_connect), continued: "LLMResponse", "LLMError Hierarchy", "Mock adapters", the commit's FR-3 and
FR-4, and issue 13's rules where the seed is silent (the first sections are in test_seed_000_llm_connect.py).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import pytest

import llmplex
from llmplex.compat import llm_connect as lc
from tests.compat.llm_connect_helpers import MODEL, claude, fault_toml
from tests.contract import fixtures_openai as fx
from tests.plugins.claude_code.conftest import FakeCLI
from tests.support.fault_server import Fault, FaultServer

__all__ = ["claude", "fault_toml"]


# -- "LLMResponse" -------------------------------------------------------------------------------------------------


def test_llmresponse_fields_from_a_provider(fault_toml: FaultServer) -> None:
    """LLMResponse: content, the model actually used, usage keys (ints >= 0), finish_reason "stop", provider."""
    fault_toml.enqueue(Fault.ok("Hi!", usage=fx.TokenUsage(12, 3)))
    response = lc.adapter_for(MODEL).execute_prompt("hi", lc.RunConfig())
    assert response.content == "Hi!" and response.model
    assert response.usage == {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    assert response.finish_reason == "stop"
    assert response.metadata["provider"] == "fault"


def test_llmresponse_model_may_differ_from_the_requested_one() -> None:
    """LLMResponse.model: the model actually used, which may differ from ``RunConfig.model_name``."""
    adapter = lc.MockLLMAdapter()
    adapter.backend.push("scripted", model="echo-2025-01-01")
    assert adapter.execute_prompt("hi", lc.RunConfig(model_name="echo")).model == "echo-2025-01-01"


def test_llmresponse_takes_its_fields_as_keywords() -> None:
    """LLMResponse(...) by keywords (issue 13), with the seed's field names."""
    response = lc.LLMResponse(
        content="c", model="m", usage={"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
        finish_reason="stop", metadata={"provider": "custom"},
    )  # fmt: skip
    assert (response.content, response.metadata["provider"], response.usage["total_tokens"]) == ("c", "custom", 3)


def test_llmresponse_finish_reason_reports_truncation() -> None:
    """LLMResponse.finish_reason is provider-reported: a cut answer says ``"length"``, not ``"stop"``."""
    response = lc.MockLLMAdapter().execute_prompt("one two three four", lc.RunConfig(max_tokens=2))
    assert (response.content, response.finish_reason) == ("one two", "length")


# -- "LLMError Hierarchy" ------------------------------------------------------------------------------------------


def test_error_hierarchy_shape() -> None:
    """LLMError Hierarchy: the tree of the seed, and the classes are llmplex's own."""
    assert issubclass(lc.LLMConfigurationError, lc.LLMError)
    assert issubclass(lc.LLMAPIError, lc.LLMError)
    assert issubclass(lc.LLMRateLimitError, lc.LLMAPIError)
    for name in ("LLMTimeoutError", "LLMSubprocessError", "LLMBudgetExceededError"):
        assert issubclass(getattr(lc, name), lc.LLMError)
    assert lc.LLMError is llmplex.LLMError and lc.LLMRateLimitError is llmplex.LLMRateLimitError


def test_error_hierarchy_attributes_cause_and_context() -> None:
    """LLMError Hierarchy: .status_code/.response_body, .return_code/.stderr; every error has cause and context."""
    cause = ValueError("root")
    api = lc.LLMAPIError("bad", status_code=418, response_body={"e": 1}, cause=cause, context={"k": "v"})
    sub = lc.LLMSubprocessError("cli", return_code=3, stderr="boom")
    assert (api.status_code, api.response_body, api.cause, api.context, api.__cause__) == (
        418,
        {"e": 1},
        cause,
        {"k": "v"},
        cause,
    )
    assert (sub.return_code, sub.stderr, sub.cause, sub.context) == (3, "boom", None, {})


# -- "Mock adapters" -----------------------------------------------------------------------------------------------


def test_mock_adapter_is_deterministic_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mock adapters: deterministic response without network I/O (sockets are blocked here)."""

    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the mock adapter opened a connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    adapter = lc.MockLLMAdapter()
    first = adapter.execute_prompt("same prompt", lc.RunConfig())
    second = adapter.execute_prompt("same prompt", lc.RunConfig())
    assert first.content == second.content == "same prompt"
    assert first.metadata["provider"] == "mock"


def test_mock_adapter_counts_records_and_resets() -> None:
    """Mock adapters: ``call_count`` increments, ``last_prompt``/``last_config`` are recorded, ``reset()`` clears."""
    adapter = lc.MockLLMAdapter()
    assert (adapter.call_count, adapter.last_prompt, adapter.last_config) == (0, None, None)
    config = lc.RunConfig(max_tokens=5)
    adapter.execute_prompt("one", lc.RunConfig())
    asyncio.run(adapter.async_execute_prompt("two", config))
    assert (adapter.call_count, adapter.last_prompt, adapter.last_config) == (2, "two", config)
    adapter.reset()
    assert (adapter.call_count, adapter.last_prompt, adapter.last_config, adapter.backend.calls) == (0, None, None, [])


def test_mock_and_error_adapters_take_no_arguments() -> None:
    """Mock adapters (issue 13): ``MockLLMAdapter()`` and ``ErrorLLMAdapter()`` take no arguments."""
    assert isinstance(lc.MockLLMAdapter(), lc.LLMAdapter)
    assert isinstance(lc.ErrorLLMAdapter(), lc.LLMAdapter)


def test_error_adapter_fails_every_call_with_a_typed_error() -> None:
    """Mock adapters: the error adapter raises an ``LLMError`` subclass on every call, sync and async, once each."""
    adapter = lc.ErrorLLMAdapter()
    for _ in range(2):
        with pytest.raises(lc.LLMAPIError) as caught:
            adapter.execute_prompt("hi", lc.RunConfig())
        assert caught.value.status_code == 500 and caught.value.provider == "mock"
    with pytest.raises(lc.LLMAPIError):
        asyncio.run(adapter.async_execute_prompt("hi", lc.RunConfig()))
    assert adapter.call_count == 3 and len(adapter.backend.calls) == 3
    assert adapter.error.context == {} and adapter.error.provider is None, "each call raises its own copy"


def test_error_adapter_raises_the_error_it_is_given_without_retrying() -> None:
    """Mock adapters: ``ErrorLLMAdapter(error)`` simulates a chosen failure (a rate limit: raised, not retried)."""
    adapter = lc.ErrorLLMAdapter(lc.LLMRateLimitError("slow down", status_code=429, retry_after=30))
    with pytest.raises(lc.LLMRateLimitError) as caught:
        adapter.execute_prompt("hi", lc.RunConfig())
    assert caught.value.retry_after == 30 and len(adapter.backend.calls) == 1


# -- the commit's small print: FR-4 budget, FR-3 async --------------------------------------------------------------


def test_fr4_budget_tracker_is_thread_safe_and_shared() -> None:
    """FR-4: BudgetTracker (thread-safe), shared through ``RunConfig.budget_tracker``: usage adds up exactly."""
    tracker = lc.BudgetTracker()
    config = lc.RunConfig(budget_tracker=tracker)
    adapter = lc.MockLLMAdapter()

    def work() -> None:
        for _ in range(10):
            adapter.execute_prompt("two words", config)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tracker.used_tokens == 80 * 4 and tracker.remaining_tokens is None
    assert tracker.snapshot().requests == 80


def test_fr4_budget_is_enforced_in_all_adapters(fault_toml: FaultServer, claude: FakeCLI) -> None:
    """FR-4: "enforcement in all adapters": an exhausted tracker stops mock, HTTP and CLI adapters before sending."""
    tracker = lc.BudgetTracker(max_tokens=1)
    config = lc.RunConfig(budget_tracker=tracker)
    lc.MockLLMAdapter().execute_prompt("spend it", config)
    for adapter in (lc.MockLLMAdapter(), lc.adapter_for(MODEL), lc.ClaudeCodeAdapter("haiku"), lc.ErrorLLMAdapter()):
        with pytest.raises(lc.LLMBudgetExceededError):
            adapter.execute_prompt("hi", config)
    assert fault_toml.request_count == 0 and claude.runs() == []


def test_fr3_claude_code_adapter_async(claude: FakeCLI) -> None:
    """FR-3: ``async_execute_prompt`` of the ClaudeCodeAdapter (a subprocess run from the event loop)."""
    claude.scenario("ok", text="from the CLI")
    response = asyncio.run(lc.ClaudeCodeAdapter("haiku").async_execute_prompt("hi", lc.RunConfig()))
    assert response.content == "from the CLI" and response.metadata["provider"] == "claude-code"


# -- issue 13's rules where the seed is silent ---------------------------------------------------------------------


def test_adapter_for_resolves_config_instances_and_aliases(fault_toml: FaultServer) -> None:
    """adapter_for(model) resolves any llmplex model string: a config instance and an alias of it."""
    assert lc.adapter_for("fault:gpt-4o-mini").execute_prompt("a", lc.RunConfig()).metadata["provider"] == "fault"
    assert lc.adapter_for("fast").execute_prompt("b", lc.RunConfig()).content
    assert fault_toml.request_count == 2


def test_adapter_for_claude_code_drops_the_temperature_it_cannot_take(claude: FakeCLI) -> None:
    """adapter_for("claude-code:...") is a ClaudeCodeAdapter; RunConfig's temperature 0.7 is dropped, not an error."""
    adapter = lc.adapter_for("claude-code:haiku")
    assert isinstance(adapter, lc.ClaudeCodeAdapter)
    response = adapter.execute_prompt("hi", lc.RunConfig(temperature=0.7, max_tokens=100))
    assert response.content == "Hello there"
    (run,) = claude.runs()
    assert "temperature" not in " ".join(run["argv"])


def test_claude_code_adapter_without_a_model_uses_the_provider_default(claude: FakeCLI) -> None:
    """ClaudeCodeAdapter(): the provider's default model (RunConfig.model_name "gpt-4" means nothing to the CLI)."""
    assert lc.ClaudeCodeAdapter().execute_prompt("hi", lc.RunConfig()).content == "Hello there"
    (run,) = claude.runs()
    assert run["argv"][run["argv"].index("--model") + 1] == "sonnet"
