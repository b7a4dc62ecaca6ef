"""Seed 001 end to end: an agent runtime written for the Gemini adapter runs on llmplex once its imports are
swapped; Gemini is a local server speaking the documented generateContent format."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.compat.e2e import run_program, swap_imports
from tests.compat.fake_gemini import FakeGemini
from tests.compat.task_tools import KEY, TOOL_DECLARATIONS
from tests.plugins.gemini.wire import error_body, function_call_part, response, text_part, usage

PROGRAM = '''
"""A task agent written against the agent-runtime LLM adapter contract."""
import asyncio
import json
import os

from agent_runtime.llm.adapter import TOOL_DECLARATIONS, FunctionResponse, LLMAdapter, LLMMessage
from agent_runtime.llm.errors import LLMError, RateLimitError, TimeoutError
from agent_runtime.llm.gemini import GeminiAdapter

TOOL_DECLARATIONS.extend(__TOOLS__)
TASKS: list = []


def execute(name: str, arguments: dict) -> dict:
    if name == "add_task":
        TASKS.append(arguments["description"])
        return {"task_id": str(len(TASKS))}
    return {"tasks": TASKS}


async def chat(adapter: LLMAdapter, text: str) -> str:
    messages = [LLMMessage(role="user", content=text)]
    tools = adapter.get_tool_declarations(["add_task", "list_tasks"])
    for _ in range(3):
        try:
            response = await adapter.generate(messages, tools)
        except RateLimitError as error:
            return f"REFUSAL:RATE_LIMITED:{error.retry_after}"
        except TimeoutError:
            return "timeout"
        except LLMError as error:
            return f"error:{error.code}"
        if response.finish_reason != "tool_calls":
            return response.content or ""
        for call in response.function_calls or []:
            messages.append(LLMMessage(role="assistant", function_call=call))
            result = FunctionResponse(name=call.name, response=execute(call.name, call.arguments))
            messages.append(LLMMessage(role="function", function_response=result))
    return "gave up"


def main() -> None:
    model = os.environ.get("GEMINI_MODEL", "gemini-2.0-flash")
    adapter = GeminiAdapter(api_key=os.environ["GEMINI_API_KEY"], model=model)
    reply = asyncio.run(chat(adapter, "remember to buy milk"))
    limited = asyncio.run(chat(adapter, "and eggs"))
    print(json.dumps({"reply": reply, "tasks": TASKS, "limited": limited}))


main()
'''.replace("__TOOLS__", repr(TOOL_DECLARATIONS[:2]))


def test_e2e_001_agent_runtime_program_runs_after_swapping_its_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 001 as its users write it: a tool-calling loop on GeminiAdapter, the app's TOOL_DECLARATIONS,
    RateLimitError -> REFUSAL:RATE_LIMITED; only the imports change."""
    for name, value in {"GEMINI_API_KEY": KEY, "GEMINI_MODEL": "gemini-2.0-flash"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(AssertionError, match="No module named 'agent_runtime'"):
        run_program(PROGRAM, tmp_path)

    retry_info = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.2s"}]
    limited = (429, error_body(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted.", retry_info))
    with FakeGemini() as gemini:
        gemini.answers.extend(
            [
                (200, response([function_call_part("add_task", {"description": "buy milk"})], usage_metadata=usage())),
                (200, response([text_part("Added 'buy milk' to your tasks.")], usage_metadata=usage())),
                limited,
                limited,
            ]
        )
        (tmp_path / "llmplex.toml").write_text(f'[providers.gemini]\nbase_url = "{gemini.url}"\n', encoding="utf-8")
        out = run_program(swap_imports(PROGRAM, r"agent_runtime(\.\w+)*", "llmplex.compat.agent_runtime"), tmp_path)

    assert out == {
        "reply": "Added 'buy milk' to your tasks.",
        "tasks": ["buy milk"],
        "limited": "REFUSAL:RATE_LIMITED:1",
    }
    paths = [path.rpartition("/")[2] for path, _, _ in gemini.requests]
    assert paths == ["gemini-2.0-flash:generateContent"] * 4, "max_retries=1: the 429 was retried once"
    assert all(headers.get("x-goog-api-key") == KEY for _, headers, _ in gemini.requests)
    second = gemini.requests[1][2]["contents"]
    assert [c["role"] for c in second] == ["user", "model", "user"]
    assert second[2]["parts"][0]["functionResponse"]["name"] == "add_task"
