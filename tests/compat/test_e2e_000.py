"""Seed 000 end to end: a program written for llm_connect runs on llmplex once its imports are swapped."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.compat.e2e import run_program, swap_imports
from tests.plugins.claude_code.conftest import FakeCLI

PROGRAM = '''
"""A batch summarizer written against llm_connect (the seed's module paths)."""
import asyncio
import json

from llm_connect.adapter import LLMAdapter
from llm_connect.models import LLMResponse, RunConfig
from llm_connect.errors import LLMAPIError, LLMBudgetExceededError, LLMError
from llm_connect.budget import BudgetTracker
from llm_connect.mock import ErrorLLMAdapter, MockLLMAdapter
from llm_connect.adapters.claude_code import ClaudeCodeAdapter


class Shouting(LLMAdapter):
    """The application's own adapter, built on another one."""

    def __init__(self, inner: LLMAdapter) -> None:
        self.inner = inner

    def execute_prompt(self, prompt: str, config: RunConfig) -> LLMResponse:
        response = self.inner.execute_prompt(prompt, config)
        return LLMResponse(content=response.content.upper(), model=response.model, usage=response.usage,
                           finish_reason=response.finish_reason, metadata={**response.metadata, "shouting": True})

    def validate_config(self, config: RunConfig) -> bool:
        return self.inner.validate_config(config)


def run(adapter: LLMAdapter, prompt: str, config: RunConfig) -> dict:
    if not adapter.validate_config(config):
        return {"skipped": True}
    try:
        response = adapter.execute_prompt(prompt, config)
    except LLMAPIError as error:
        return {"error": type(error).__name__, "status": error.status_code}
    except LLMBudgetExceededError:
        return {"error": "budget"}
    except LLMError as error:
        return {"error": type(error).__name__}
    usage = response.usage
    return {"content": response.content, "provider": response.metadata["provider"], "tokens": usage["total_tokens"]}


async def fan_out(adapter: LLMAdapter, prompts: list, config: RunConfig) -> list:
    return [r.content for r in await asyncio.gather(*(adapter.async_execute_prompt(p, config) for p in prompts))]


def main() -> None:
    config = RunConfig(model_name="sonnet", max_tokens=200, timeout_seconds=30)
    mock = MockLLMAdapter()
    out = {
        "mock": run(mock, "hello world", config),
        "shouting": run(Shouting(MockLLMAdapter()), "quiet please", config),
        "error": run(ErrorLLMAdapter(), "anything", config),
        "claude": run(ClaudeCodeAdapter(), "say hello", config),
        "async": asyncio.run(fan_out(mock, ["a b", "c"], config)),
        "claude_async": asyncio.run(fan_out(ClaudeCodeAdapter(), ["hi"], config)),
    }
    out["calls"] = mock.call_count
    small = RunConfig(budget_tracker=BudgetTracker(max_tokens=3))
    out["budget"] = [run(mock, "one two", small), run(mock, "three", small)]
    print(json.dumps(out))


main()
'''


def test_e2e_000_llm_connect_program_runs_after_swapping_its_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 000 as its users write it: the original imports fail here, the swapped ones run on llmplex."""
    cli = FakeCLI(tmp_path / "bin", monkeypatch, found_by_env=True)
    cli.scenario("ok", text="Hello from Claude")
    with pytest.raises(AssertionError, match="No module named 'llm_connect'"):
        run_program(PROGRAM, tmp_path)

    out = run_program(swap_imports(PROGRAM, r"llm_connect(\.\w+)*", "llmplex.compat.llm_connect"), tmp_path)
    assert out["mock"] == {"content": "hello world", "provider": "mock", "tokens": 4}
    assert out["shouting"]["content"] == "QUIET PLEASE"
    assert out["error"] == {"error": "LLMAPIError", "status": 500}
    assert (out["claude"]["content"], out["claude"]["provider"]) == ("Hello from Claude", "claude-code")
    assert out["async"] == ["a b", "c"] and out["claude_async"] == ["Hello from Claude"]
    assert out["calls"] == 3
    assert out["budget"] == [{"content": "one two", "provider": "mock", "tokens": 4}, {"error": "budget"}]
    assert len(cli.runs()) == 2
