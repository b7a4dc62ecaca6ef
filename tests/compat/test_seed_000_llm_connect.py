"""Seed 000 (llm_connect, "Contract: Core — LLMAdapter Interface") on llmplex.compat.llm_connect.

Every documented example and behaviour of the seed is a test here; each docstring names the seed
section it covers. Providers: llmplex's mock, the fault-injecting OpenAI-wire server (as a config
instance ``fault:`` in ./llmplex.toml, the way a user declares one), and the fake ``claude`` CLI.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import threading
from pathlib import Path
from typing import Any

import pytest

from llmplex.compat import llm_connect as lc
from tests.compat.conftest import FAULT_KEY
from tests.compat.llm_connect_helpers import MODEL, claude, fault_toml, sent
from tests.contract import fixtures_openai as fx
from tests.plugins.claude_code.conftest import FakeCLI
from tests.support.fault_server import Fault, FaultServer
from tests.support.late import Late

__all__ = ["claude", "fault_toml"]


# -- "LLMAdapter ABC" / "Interface" -------------------------------------------------------------------------------


def test_interface_llm_adapter_is_an_abc_with_two_abstract_methods() -> None:
    """Interface: ``execute_prompt`` and ``validate_config`` are abstract; a subclass must define both."""

    class OnlyExecute(lc.LLMAdapter):
        def execute_prompt(self, prompt: str, config: lc.RunConfig) -> lc.LLMResponse:
            return lc.LLMResponse(content=prompt, model="m")

    with pytest.raises(TypeError):
        lc.LLMAdapter()  # type: ignore[abstract]
    with pytest.raises(TypeError):
        OnlyExecute()  # type: ignore[abstract]
    assert lc.LLMAdapter.__abstractmethods__ == {"execute_prompt", "validate_config"}


def test_interface_planned_async_execute_prompt_defaults_to_a_worker_thread() -> None:
    """Planned addition (WP-0002 T07) and FR-3: the default ``async_execute_prompt`` runs ``execute_prompt``
    in a thread executor, so a sync-only adapter is awaitable without blocking the loop."""
    seen: dict[str, Any] = {}

    class Upper(lc.LLMAdapter):
        def execute_prompt(self, prompt: str, config: lc.RunConfig) -> lc.LLMResponse:
            seen["thread"] = threading.get_ident()
            return lc.LLMResponse(content=prompt.upper(), model="upper", metadata={"provider": "local"})

        def validate_config(self, config: lc.RunConfig) -> bool:
            return True

    async def main() -> lc.LLMResponse:
        seen["loop_thread"] = threading.get_ident()
        return await Upper().async_execute_prompt("hi", lc.RunConfig())

    assert asyncio.run(main()).content == "HI"
    assert seen["thread"] != seen["loop_thread"]


def test_interface_adapter_for_is_natively_async(fault_toml: FaultServer) -> None:
    """Planned addition: an llmplex adapter's ``async_execute_prompt`` awaits llmplex directly (many at once)."""

    async def main() -> list[lc.LLMResponse]:
        adapter = lc.adapter_for(MODEL)
        return await asyncio.gather(*(adapter.async_execute_prompt(f"q{i}", lc.RunConfig()) for i in range(5)))

    answers = asyncio.run(main())
    assert [a.content for a in answers] == ["Hello! How can I help?"] * 5
    assert fault_toml.request_count == 5


# -- "Invariants" 1-6 ----------------------------------------------------------------------------------------------


def test_invariant_1_success_has_non_empty_content(fault_toml: FaultServer) -> None:
    """Invariant 1: ``execute_prompt`` returns an LLMResponse with non-empty ``content`` on success."""
    fault_toml.enqueue(Fault.ok("Paris."))
    response = lc.adapter_for(MODEL).execute_prompt("Capital of France?", lc.RunConfig())
    assert isinstance(response, lc.LLMResponse) and response.content == "Paris."


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        (lambda: lc.adapter_for("mock:echo").execute_prompt(123, lc.RunConfig()), lc.LLMConfigurationError),  # type: ignore[arg-type]
        (lambda: lc.adapter_for("mock:echo").execute_prompt("hi", {"temperature": 1}), lc.LLMConfigurationError),  # type: ignore[arg-type]
        (lambda: lc.adapter_for("nosuch:model"), lc.LLMConfigurationError),
        (lambda: lc.adapter_for(""), lc.LLMConfigurationError),
        (lambda: lc.RunConfig(temperature="hot"), lc.LLMConfigurationError),  # type: ignore[arg-type]
    ],
    ids=["prompt not a string", "config not a RunConfig", "unknown provider", "empty model", "bad option"],
)
def test_invariant_2_every_failure_is_an_llm_error(call: Any, kind: type[lc.LLMError]) -> None:
    """Invariant 2: any failure raises a subclass of ``LLMError``, never a bare exception (bad input included)."""
    with pytest.raises(kind) as caught:
        call()
    assert isinstance(caught.value, lc.LLMError) and str(caught.value)


def test_invariant_3_validate_config_is_side_effect_free_and_boolean(monkeypatch: pytest.MonkeyPatch) -> None:
    """Invariant 3: ``validate_config`` returns a bool and sends nothing; it says False when the key is missing."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    mock = lc.MockLLMAdapter()
    config = lc.RunConfig()
    assert mock.validate_config(config) is True
    assert (mock.call_count, mock.backend.calls) == (0, [])
    assert lc.adapter_for("openai:gpt-4o-mini").validate_config(config) is False
    assert mock.validate_config("not a config") is False  # type: ignore[arg-type]


def test_invariant_4_validate_config_is_advisory() -> None:
    """Invariant 4: ``validate_config`` returning False does not stop ``execute_prompt`` (it is never consulted)."""

    class Strict(lc.MockLLMAdapter):
        def validate_config(self, config: lc.RunConfig) -> bool:
            return False

    adapter = Strict()
    assert adapter.validate_config(lc.RunConfig()) is False
    assert adapter.execute_prompt("still runs", lc.RunConfig()).content == "still runs"


def test_invariant_5_adapters_do_not_mutate_the_config(fault_toml: FaultServer, claude: FakeCLI) -> None:
    """Invariant 5 (and "Adapters MUST NOT mutate RunConfig fields"): every adapter leaves its config as it was."""
    tracker = lc.BudgetTracker(max_tokens=10_000)
    rich = lc.RunConfig(model_params={"top_p": 0.5, "user": "u-1", "metadata": {"a": [1]}}, budget_tracker=tracker)
    plain = lc.RunConfig(model_params={"top_p": 0.5}, budget_tracker=tracker)  # the CLI takes no provider params
    before = [copy.deepcopy({k: v for k, v in vars(c).items() if k != "budget_tracker"}) for c in (rich, plain)]
    for adapter in (lc.MockLLMAdapter(), lc.adapter_for(MODEL)):
        adapter.execute_prompt("hi", rich)
    lc.ClaudeCodeAdapter("haiku").execute_prompt("hi", plain)
    with pytest.raises(lc.LLMAPIError):
        lc.ErrorLLMAdapter().execute_prompt("hi", rich)
    assert [{k: v for k, v in vars(c).items() if k != "budget_tracker"} for c in (rich, plain)] == before
    assert rich.budget_tracker is tracker and plain.budget_tracker is tracker


def test_invariant_6_timeout_seconds_is_respected(fault_toml: FaultServer) -> None:
    """Invariant 6: ``execute_prompt`` may be slow but respects ``config.timeout_seconds`` (a hanging server)."""
    fault_toml.enqueue(Fault.hang(10))
    adapter, config = lc.adapter_for(MODEL), lc.RunConfig(timeout_seconds=1)
    # made a moment before the call makes its own deadline of 1 s (``tests.support.late``: the time a busy machine
    # keeps the caller waiting for a CPU is not counted)
    late = Late.after(1)
    with pytest.raises(lc.LLMTimeoutError):
        adapter.execute_prompt("hi", config)
    seconds = late.seconds()
    assert seconds < 1.5, late.describe(seconds)


# -- "Failure modes" -----------------------------------------------------------------------------------------------


def test_failure_mode_missing_api_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Failure modes: missing API key -> ``LLMConfigurationError`` (before anything is sent)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(lc.LLMConfigurationError, match="OPENAI_API_KEY"):
        lc.adapter_for("openai:gpt-4o-mini").execute_prompt("hi", lc.RunConfig())


def test_failure_mode_invalid_api_key_is_a_configuration_error_with_status(fault_toml: FaultServer) -> None:
    """Failure modes: invalid API key (HTTP 401) -> ``LLMConfigurationError``, also an ``LLMAPIError`` with 401."""
    fault_toml.enqueue(
        Fault.json(401, fx.error_body(f"Incorrect API key provided: {FAULT_KEY}", "invalid_request_error"))
    )
    with pytest.raises(lc.LLMConfigurationError) as caught:
        lc.adapter_for(MODEL).execute_prompt("hi", lc.RunConfig())
    assert isinstance(caught.value, lc.LLMAPIError) and caught.value.status_code == 401
    assert FAULT_KEY not in str(caught.value)


@pytest.mark.parametrize("status", [400, 404, 422])
def test_failure_mode_http_4xx_is_an_api_error_with_status_code(fault_toml: FaultServer, status: int) -> None:
    """Failure modes: HTTP 4xx (non-429) -> ``LLMAPIError`` with ``.status_code`` (and ``.response_body``)."""
    fault_toml.enqueue(Fault.json(status, fx.error_body("The model `gpt-9` does not exist", "invalid_request_error")))
    with pytest.raises(lc.LLMAPIError) as caught:
        lc.adapter_for(MODEL).execute_prompt("hi", lc.RunConfig())
    assert not isinstance(caught.value, lc.LLMRateLimitError)
    assert caught.value.status_code == status
    assert caught.value.response_body["message"] == "The model `gpt-9` does not exist"


@pytest.mark.parametrize("fault", [Fault.rate_limit(retry_after=7), Fault.quota()], ids=["rate limit", "quota"])
def test_failure_mode_http_429_is_a_rate_limit_error(fault_toml: FaultServer, fault: Fault) -> None:
    """Failure modes: HTTP 429 -> ``LLMRateLimitError`` (insufficient quota too), status 429."""
    fault_toml.enqueue(fault)
    with pytest.raises(lc.LLMRateLimitError) as caught:
        lc.adapter_for(MODEL).execute_prompt("hi", lc.RunConfig())
    assert isinstance(caught.value, lc.LLMAPIError) and caught.value.status_code == 429


def test_failure_mode_rate_limits_are_retried_by_llmplex_first(fault_toml: FaultServer, isolated_config: Path) -> None:
    """Failure modes: a 429 surfaces only after llmplex's own retries (Retry-After honoured), not before."""
    (isolated_config / "llmplex.toml").write_text(
        (isolated_config / "llmplex.toml").read_text().replace("max_attempts = 1", "max_attempts = 3")
    )
    fault_toml.enqueue(Fault.rate_limit(retry_after_ms=50), Fault.ok("after waiting"))
    assert lc.adapter_for(MODEL).execute_prompt("hi", lc.RunConfig()).content == "after waiting"
    assert fault_toml.request_count == 2


def test_failure_mode_request_timeout_is_a_timeout_error(fault_toml: FaultServer) -> None:
    """Failure modes: request timeout -> ``LLMTimeoutError`` (here the config's deadline on a silent server)."""
    fault_toml.enqueue(Fault.hang(10))
    with pytest.raises(lc.LLMTimeoutError):
        asyncio.run(lc.adapter_for(MODEL).async_execute_prompt("hi", lc.RunConfig(timeout_seconds=1)))


def test_failure_mode_cli_subprocess_failure_has_return_code_and_stderr(claude: FakeCLI) -> None:
    """Failure modes: CLI subprocess failure -> ``LLMSubprocessError`` with ``.return_code`` and ``.stderr``."""
    claude.scenario("crash")
    with pytest.raises(lc.LLMSubprocessError) as caught:
        lc.ClaudeCodeAdapter("haiku").execute_prompt("hi", lc.RunConfig())
    assert caught.value.return_code == 2
    assert "unexpected failure" in caught.value.stderr


def test_failure_mode_budget_exceeded(fault_toml: FaultServer) -> None:
    """Failure modes (WP-0002): token budget exceeded -> ``LLMBudgetExceededError``, raised before sending."""
    tracker = lc.BudgetTracker(max_tokens=5)
    config = lc.RunConfig(budget_tracker=tracker)
    adapter = lc.adapter_for(MODEL)
    fault_toml.enqueue(Fault.ok(usage=fx.TokenUsage(12, 5)))
    adapter.execute_prompt("hi", config)
    with pytest.raises(lc.LLMBudgetExceededError):
        adapter.execute_prompt("again", config)
    assert fault_toml.request_count == 1
    assert tracker.used_tokens == 17 and tracker.remaining_tokens == 0


# -- "Compatibility rules" -----------------------------------------------------------------------------------------


def summarize(adapter: lc.LLMAdapter, text: str) -> str:
    """Application code written against the ABC, as the seed's users write it."""
    config = lc.RunConfig(max_tokens=50)
    if not adapter.validate_config(config):
        raise RuntimeError("adapter not ready")
    return adapter.execute_prompt(f"Summarize: {text}", config).content


def test_compatibility_code_accepting_llm_adapter_works_with_mock_adapter(fault_toml: FaultServer) -> None:
    """Compatibility rules: any code that accepts ``LLMAdapter`` works with ``MockLLMAdapter`` (and real ones)."""
    assert summarize(lc.MockLLMAdapter(), "the cat sat") == "Summarize: the cat sat"
    assert summarize(lc.adapter_for(MODEL), "the cat sat") == "Hello! How can I help?"
    assert isinstance(lc.MockLLMAdapter(), lc.LLMAdapter) and isinstance(lc.adapter_for("mock:echo"), lc.LLMAdapter)


@pytest.mark.parametrize("cls", [lc.LLMAdapter, lc.LLMPlexAdapter, lc.ClaudeCodeAdapter, lc.MockLLMAdapter])
def test_compatibility_the_method_signatures_are_the_seeds(cls: type[lc.LLMAdapter]) -> None:
    """Compatibility rules: ``execute_prompt(prompt, config)`` and ``validate_config(config)`` keep their
    signatures (changing them would be a breaking Core change); ``async_execute_prompt`` mirrors the first."""
    assert list(inspect.signature(cls.execute_prompt).parameters) == ["self", "prompt", "config"]
    assert list(inspect.signature(cls.async_execute_prompt).parameters) == ["self", "prompt", "config"]
    assert list(inspect.signature(cls.validate_config).parameters) == ["self", "config"]
    assert inspect.iscoroutinefunction(cls.async_execute_prompt)


def test_compatibility_new_optional_methods_do_not_break_old_adapters() -> None:
    """Compatibility rules: an adapter written before ``async_execute_prompt`` existed still works, and has it."""

    class Legacy(lc.LLMAdapter):
        def execute_prompt(self, prompt: str, config: lc.RunConfig) -> lc.LLMResponse:
            return lc.LLMResponse(content="legacy", model="old", metadata={"provider": "legacy"})

        def validate_config(self, config: lc.RunConfig) -> bool:
            return True

    assert asyncio.run(Legacy().async_execute_prompt("x", lc.RunConfig())).content == "legacy"


# -- "RunConfig" ---------------------------------------------------------------------------------------------------


def test_runconfig_fields_and_defaults() -> None:
    """RunConfig: the seed's fields and defaults."""
    config = lc.RunConfig()
    assert (config.model_name, config.temperature, config.max_tokens, config.model_params) == ("gpt-4", 0.7, 2000, {})
    assert (config.max_depth, config.skip_if_exists, config.timeout_seconds, config.budget_tracker) == (
        3,
        True,
        300,
        None,
    )
    assert lc.RunConfig().model_params is not config.model_params


@pytest.mark.parametrize(
    "fields",
    [
        {"model_name": ""},
        {"model_name": "   "},
        {"temperature": -0.1},
        {"temperature": 2.01},
        {"max_tokens": 0},
        {"max_depth": -1},
        {"timeout_seconds": 0},
        {"model_params": ["not", "a", "dict"]},
        {"budget_tracker": object()},
    ],
)
def test_runconfig_invariants_are_checked(fields: dict[str, Any]) -> None:
    """RunConfig invariants: non-empty model_name, 0 <= temperature <= 2, max_tokens > 0, max_depth >= 0,
    timeout_seconds > 0; a violation is an ``LLMConfigurationError`` naming the field."""
    with pytest.raises(lc.LLMConfigurationError, match=f"RunConfig.{next(iter(fields))}"):
        lc.RunConfig(**fields)


def test_runconfig_boundaries_are_valid() -> None:
    """RunConfig invariants are inclusive where the seed says so (0.0 and 2.0, max_depth 0)."""
    assert lc.RunConfig(temperature=0.0, max_depth=0).temperature == 0.0
    assert lc.RunConfig(temperature=2.0, max_tokens=1, timeout_seconds=1).temperature == 2.0


def test_runconfig_model_params_pass_through(fault_toml: FaultServer) -> None:
    """RunConfig.model_params: provider-specific pass-through (options by llmplex name become options)."""
    config = lc.RunConfig(temperature=0.2, max_tokens=64, model_params={"top_p": 0.9, "seed": 7, "user": "u-42"})
    lc.adapter_for(MODEL).execute_prompt("hi", config)
    (body,) = sent(fault_toml)
    assert (body["temperature"], body["max_tokens"], body["top_p"], body["seed"], body["user"]) == (
        0.2,
        64,
        0.9,
        7,
        "u-42",
    )


def test_runconfig_adapters_may_override_model_name(fault_toml: FaultServer) -> None:
    """RunConfig.model_name: "adapters MAY override": the adapter's model is the one sent."""
    lc.adapter_for(MODEL).execute_prompt("hi", lc.RunConfig(model_name="gpt-4"))
    assert sent(fault_toml)[0]["model"] == "gpt-4o-mini"
