"""Issue 23 item 5: llm_connect's Core contract (seed 000): every class, method, attribute and default it names.

The fields, defaults, failure modes and error tree are read from the seed copied
into tests/compat/seeds/000_llm_connect.txt; providers are faked at the HTTP
layer (the fault server as a ``fault:`` instance) and the CLI by a fake ``claude``.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import math
import re
from pathlib import Path
from typing import Any

import pytest

from llmplex.compat import llm_connect as lc
from llmplex.compat.llm_connect import (
    ErrorLLMAdapter,
    LLMAdapter,
    LLMAPIError,
    LLMConfigurationError,
    LLMResponse,
    MockLLMAdapter,
    RunConfig,
)
from tests.compat.conftest import FAULT_KEY
from tests.compat.seed_text import seed, table
from tests.contract import fixtures_openai as fx
from tests.plugins.claude_code.conftest import FakeCLI
from tests.support.fault_server import Fault, FaultServer

SEED = seed("000_llm_connect.txt")
MODEL = "fault:gpt-4o-mini"


@pytest.fixture
def fault(fault_server: FaultServer, isolated_config: Path) -> FaultServer:
    (isolated_config / "llmplex.toml").write_text(
        f'[providers.fault]\nplugin = "openai"\nbase_url = "{fault_server.url}"\napi_key = "{FAULT_KEY}"\n'
        'api = "chat"\n\n[throttle]\nmax_attempts = 1\n',
        encoding="utf-8",
    )
    return fault_server


def test_item_5_runconfig_has_every_field_and_default_of_the_table() -> None:
    rows = table(SEED, "Field")
    assert [f.name for f in dataclasses.fields(RunConfig)] == [row["Field"] for row in rows]
    made = RunConfig()
    for row in rows:
        default = row["Default"]
        expected: Any = {} if default == "{}" else None if default == "None" else eval(default)
        assert getattr(made, row["Field"]) == expected, row


@pytest.mark.parametrize(
    "fields",
    [
        {"temperature": -0.1},
        {"temperature": 2.01},
        {"temperature": math.nan},
        {"temperature": True},
        {"max_tokens": 0},
        {"max_tokens": -5},
        {"max_tokens": math.inf},
        {"max_tokens": 10.5},
        {"max_depth": -1},
        {"timeout_seconds": 0},
        {"timeout_seconds": math.nan},
        {"model_name": ""},
        {"model_params": ["not", "a", "dict"]},
        {"budget_tracker": object()},
    ],
)
def test_item_5_runconfig_invariants_reject_hostile_values_with_a_typed_error(fields: dict[str, Any]) -> None:
    with pytest.raises(LLMConfigurationError, match=next(iter(fields))):
        RunConfig(**fields)


def test_item_5_llmresponse_has_the_tables_fields_and_the_usage_keys(fault: FaultServer) -> None:
    assert [f.name for f in dataclasses.fields(LLMResponse)] == [row["Field"] for row in table(SEED, "Field", 1)]
    fault.enqueue(Fault.ok("hello", usage=fx.TokenUsage(7, 3)))
    response = lc.adapter_for(MODEL).execute_prompt("hi", RunConfig())
    assert response.content == "hello" and response.model and response.finish_reason == "stop"
    assert response.usage == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    assert response.metadata["provider"] == "fault"


def test_item_5_llm_adapter_is_the_abc_with_the_seeds_methods() -> None:
    assert LLMAdapter.__abstractmethods__ == frozenset({"execute_prompt", "validate_config"})
    for name, parameters in (
        ("execute_prompt", ["prompt", "config"]),
        ("validate_config", ["config"]),
        ("async_execute_prompt", ["prompt", "config"]),
    ):
        assert list(inspect.signature(getattr(LLMAdapter, name)).parameters)[1:] == parameters
    assert inspect.iscoroutinefunction(LLMAdapter.async_execute_prompt)

    class Echo(LLMAdapter):
        def execute_prompt(self, prompt: str, config: RunConfig) -> LLMResponse:
            return LLMResponse(content=prompt, model="echo", usage={}, finish_reason="stop", metadata={})

        def validate_config(self, config: RunConfig) -> bool:
            return True

    assert asyncio.run(Echo().async_execute_prompt("hi", RunConfig())).content == "hi"


def test_item_5_the_error_tree_is_the_seeds() -> None:
    block = SEED.split("## LLMError Hierarchy", 1)[1].split("```", 2)[1]
    names = re.findall(r"(LLM\w*Error)", block)
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in block.splitlines():
        found = re.search(r"(LLM\w*Error)", line)
        if not found:
            continue
        depth = found.start()
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            parents[found.group(1)] = stack[-1][1]
        stack.append((depth, found.group(1)))
    assert len(names) == 7 and len(parents) == 6
    for child, parent in parents.items():
        assert issubclass(getattr(lc, child), getattr(lc, parent)), (child, parent)


def test_item_5_every_error_carries_optional_cause_and_context_and_its_attributes() -> None:
    cause = ValueError("underneath")
    for name in ("LLMError", "LLMConfigurationError", "LLMAPIError", "LLMRateLimitError", "LLMTimeoutError"):
        bare = getattr(lc, name)("m")
        assert bare.cause is None and bare.context == {}
        rich = getattr(lc, name)("m", cause=cause, context={"k": 1})
        assert rich.cause is cause and rich.__cause__ is cause and rich.context == {"k": 1}
    api = LLMAPIError("bad", status_code=418, response_body={"error": "teapot"})
    assert (api.status_code, api.response_body) == (418, {"error": "teapot"})
    sub = lc.LLMSubprocessError("cli failed", return_code=3, stderr="boom")
    assert (sub.return_code, sub.stderr) == (3, "boom")
    assert lc.LLMBudgetExceededError("over").context == {}


@pytest.mark.parametrize(
    ("fault_to_send", "error", "status"),
    [
        (Fault.json(400, fx.error_body("bad request", "invalid_request_error")), "LLMAPIError", 400),
        (Fault.json(404, fx.error_body("no such model", "invalid_request_error")), "LLMAPIError", 404),
        (Fault.rate_limit(retry_after=1), "LLMRateLimitError", 429),
    ],
)
def test_item_5_failure_modes_over_http(fault: FaultServer, fault_to_send: Fault, error: str, status: int) -> None:
    named = {row["Exception"].split()[0] for row in table(SEED, "Condition")}
    assert error in named and all(isinstance(getattr(lc, name), type) for name in named)
    fault.enqueue(fault_to_send)
    with pytest.raises(getattr(lc, error)) as raised:
        lc.adapter_for(MODEL).execute_prompt("hi", RunConfig())
    assert raised.value.status_code == status and FAULT_KEY not in str(raised.value)


def test_item_5_failure_modes_key_timeout_subprocess_budget(
    fault: FaultServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMConfigurationError):
        lc.adapter_for("openai:gpt-4o-mini").execute_prompt("hi", RunConfig())
    fault.enqueue(Fault.hang(10))
    with pytest.raises(lc.LLMTimeoutError):
        lc.adapter_for(MODEL).execute_prompt("hi", RunConfig(timeout_seconds=1))
    # the hanging request took its fault before the next one is queued: a loaded server's handler thread may not
    # have read it when the client gave up, and the next request (another connection) could take the hang instead
    assert fault.wait_for_requests(1, timeout=10)
    cli = FakeCLI(tmp_path / "bin", monkeypatch, found_by_env=True)
    cli.scenario("crash")
    with pytest.raises(lc.LLMSubprocessError) as crashed:
        lc.ClaudeCodeAdapter("haiku").execute_prompt("hi", RunConfig())
    assert crashed.value.return_code == 2 and crashed.value.stderr
    tracker = lc.BudgetTracker(max_tokens=5)
    fault.enqueue(Fault.ok(usage=fx.TokenUsage(12, 5)))
    lc.adapter_for(MODEL).execute_prompt("hi", RunConfig(budget_tracker=tracker))
    with pytest.raises(lc.LLMBudgetExceededError):
        lc.adapter_for(MODEL).execute_prompt("again", RunConfig(budget_tracker=tracker))


def test_item_5_adapters_do_not_mutate_the_config_and_validate_config_is_a_bool(fault: FaultServer) -> None:
    config = RunConfig(model_params={"top_p": 0.5, "user": "u1"})
    before = copy.deepcopy(config)
    fault.enqueue(Fault.ok("x"))
    adapter = lc.adapter_for(MODEL)
    adapter.execute_prompt("hi", config)
    assert config == before
    assert adapter.validate_config(config) is True and adapter.validate_config("nope") is False  # type: ignore[arg-type]


def test_item_5_mock_adapter_invariants_call_count_last_prompt_last_config_reset() -> None:
    mock = MockLLMAdapter()
    config = RunConfig(max_tokens=10)
    first, second = mock.execute_prompt("ping", config), mock.execute_prompt("ping", config)
    assert (first.content, first.model, first.usage) == (second.content, second.model, second.usage)
    assert mock.call_count == 2 and mock.last_prompt == "ping" and mock.last_config is config
    asyncio.run(mock.async_execute_prompt("async", config))
    assert mock.call_count == 3 and mock.last_prompt == "async"
    mock.reset()
    assert (mock.call_count, mock.last_prompt, mock.last_config) == (0, None, None)


def test_item_5_error_adapter_fails_every_call_and_code_accepting_llm_adapter_takes_both_mocks() -> None:
    def run(adapter: LLMAdapter) -> str:
        return adapter.execute_prompt("hi", RunConfig()).content

    assert run(MockLLMAdapter()) == "hi"
    with pytest.raises(LLMAPIError) as failed:
        run(ErrorLLMAdapter())
    assert failed.value.status_code == 500
    with pytest.raises(lc.LLMTimeoutError):
        run(ErrorLLMAdapter(lc.LLMTimeoutError("slow")))


def test_item_5_budget_tracker_is_thread_safe_and_enforced_through_run_config() -> None:
    """WP-0002 FR-4: BudgetTracker (thread-safe), RunConfig.budget_tracker, LLMBudgetExceededError."""
    import threading

    tracker = lc.BudgetTracker(max_tokens=1_000_000)
    config = RunConfig(budget_tracker=tracker)
    totals: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        adapter = MockLLMAdapter()
        for _ in range(5):
            used = adapter.execute_prompt("count these four words", config).usage["total_tokens"]
            with lock:
                totals.append(used)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(totals) == 30 and tracker.used_tokens == sum(totals) > 0
    assert tracker.remaining_tokens == 1_000_000 - sum(totals)
    spent = lc.BudgetTracker(max_tokens=1)
    MockLLMAdapter().execute_prompt("spend it", RunConfig(budget_tracker=spent))
    with pytest.raises(lc.LLMBudgetExceededError):
        MockLLMAdapter().execute_prompt("one more", RunConfig(budget_tracker=spent))
