"""The claude-code plugin through the public API, against a fake `claude` executable."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

import llmplex
from llmplex.cli.main import cli
from llmplex.errors import (
    LLMBadRequestError,
    LLMConfigurationError,
    LLMDeadlineExceededError,
    LLMRateLimitError,
    LLMServerError,
    LLMSubprocessError,
    LLMTimeoutError,
)
from tests.plugins.claude_code.conftest import API_KEY, FakeCLI


class City(BaseModel):
    name: str
    country: str


def test_complete_runs_print_mode_with_the_prompt_on_stdin(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    response = llm.complete("claude-code:haiku", "Say hi to the secret-prompt")
    assert response.text == "Hello there"
    assert (response.provider, response.model, response.finish_reason) == (
        "claude-code",
        "claude-haiku-4-5-20251001",
        "stop",
    )
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.cached_tokens) == (15, 5, 3)
    assert response.response_id == "5ce037ca-0f57-47c5-a69c-c418b46286d4"
    assert response.raw["total_cost_usd"] == pytest.approx(0.000037)
    [run] = fake_cli.runs()
    assert run["stdin"] == "Say hi to the secret-prompt"
    assert not any("secret-prompt" in arg for arg in run["argv"])
    assert run["argv"][:3] == ["-p", "--output-format", "json"]
    assert run["argv"][run["argv"].index("--model") + 1] == "haiku"
    assert run["argv"][run["argv"].index("--tools") + 1] == ""
    assert "--no-session-persistence" in run["argv"]
    assert {
        k: run["env"].get(k) for k in ("CLAUDE_CODE_MAX_RETRIES", "ANTHROPIC_API_KEY", "CLAUDE_CODE_MAX_OUTPUT_TOKENS")
    } == {
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": None,
    }


def test_system_prompt_option_conversation_and_max_tokens(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    conversation = [
        llmplex.Message.user("My name is Ada."),
        llmplex.Message.assistant("Hello Ada."),
        llmplex.Message.user("What is my name?"),
    ]
    llm.complete("claude-code:sonnet", conversation, system="Answer briefly.", max_tokens=50)
    [run] = fake_cli.runs()
    assert run["argv"][run["argv"].index("--system-prompt") + 1] == "Answer briefly."
    assert run["stdin"].endswith("User: My name is Ada.\n\nAssistant: Hello Ada.\n\nUser: What is my name?")
    assert run["env"]["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "50"


async def test_acomplete(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    fake_cli.scenario("ok", text="async hello")
    response = await llm.acomplete("claude-code:opus", "hi")
    assert (response.text, response.model) == ("async hello", "claude-opus-4-1-20250805")


def test_stream_uses_stream_json_with_partial_messages(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    fake_cli.scenario("ok", text="one two three")
    events = list(llm.stream("claude-code:haiku", "count"))
    assert [e.text for e in events if e.type == "text"] == ["one", " two", " three"]
    final = events[-1].response
    assert final is not None
    assert (final.text, final.usage.output_tokens, final.model) == ("one two three", 5, "claude-haiku-4-5-20251001")
    argv = fake_cli.runs()[0]["argv"]
    assert argv[:3] == ["-p", "--output-format", "stream-json"]
    assert "--verbose" in argv and "--include-partial-messages" in argv


async def test_astream(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    fake_cli.scenario("ok", text="async stream")
    events = [e async for e in llm.astream("claude-code:haiku", "go")]
    assert "".join(e.text for e in events if e.type == "text") == "async stream"
    assert events[-1].response is not None and events[-1].response.text == "async stream"


def test_structured_output_uses_json_schema(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    fake_cli.scenario("ok", structured='{"name": "Paris", "country": "France"}')
    response = llm.complete("claude-code:haiku", "Capital of France?", output=City)
    assert response.output == City(name="Paris", country="France")
    argv = fake_cli.runs()[0]["argv"]
    schema = json.loads(argv[argv.index("--json-schema") + 1])
    assert schema["required"] == ["name", "country"]


def test_max_tokens_stop_is_length(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    fake_cli.scenario("max_tokens")
    assert llm.complete("claude-code:haiku", "long story").finish_reason == "length"


# -- failures --------------------------------------------------------------------------------


def test_not_logged_in_is_a_configuration_error(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    fake_cli.scenario("not_logged_in")
    with pytest.raises(LLMConfigurationError, match="/login"):
        llm.complete("claude-code:haiku", "hi")


def test_not_logged_in_while_streaming(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    fake_cli.scenario("not_logged_in")
    with pytest.raises(LLMConfigurationError, match="not authenticated"):
        list(llm.stream("claude-code:haiku", "hi"))


@pytest.mark.parametrize(
    ("status", "expected"), [(429, LLMRateLimitError), (529, LLMServerError), (400, LLMBadRequestError)]
)
def test_api_errors_in_the_result_map_by_status(
    llm: llmplex.Client, fake_cli: FakeCLI, status: int, expected: type[Exception]
) -> None:
    fake_cli.scenario(f"api_error:{status}")
    with pytest.raises(expected) as caught:
        llm.complete("claude-code:haiku", "hi")
    assert type(caught.value) is expected
    assert caught.value.status_code == status  # type: ignore[attr-defined]


def test_core_retries_a_rate_limited_run(fake_cli: FakeCLI) -> None:
    fake_cli.scenario("api_error:429")
    llm = llmplex.Client(
        providers={"claude-code": {"cli_path": str(fake_cli.path)}},
        throttle={"max_attempts": 2, "base_delay": 0.01, "max_delay": 0.01},
    )
    with pytest.raises(LLMRateLimitError) as caught:
        llm.complete("claude-code:haiku", "hi")
    assert caught.value.attempts == 2 and len(fake_cli.runs()) == 2


def test_non_zero_exit_is_a_subprocess_error_with_redacted_stderr(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    fake_cli.scenario("crash")
    with pytest.raises(LLMSubprocessError) as caught:
        llm.complete("claude-code:haiku", "hi")
    assert caught.value.return_code == 2
    assert "unexpected failure" in caught.value.stderr
    assert API_KEY not in caught.value.stderr and API_KEY not in str(caught.value)


async def test_garbage_output_is_a_subprocess_error_quoting_it(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    fake_cli.scenario("garbage")
    with pytest.raises(LLMSubprocessError, match=r"not valid JSON.*this is not json"):
        llm.complete("claude-code:haiku", "hi")
    with pytest.raises(LLMSubprocessError, match=r"no result.*this is not json"):
        list(llm.stream("claude-code:haiku", "hi"))
    with pytest.raises(LLMSubprocessError, match=r"no result.*this is not json"):
        [e async for e in llm.astream("claude-code:haiku", "hi")]


def _assert_group_killed(fake_cli: FakeCLI) -> None:
    cli_pid, child_pid = (int(p) for p in fake_cli.pids.read_text().split())
    for pid in (cli_pid, child_pid):
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            reaped = os.waitpid(pid, os.WNOHANG) if pid == cli_pid else (0, 0)
            if reaped[0] == pid:
                break
            time.sleep(0.02)
        else:
            pytest.fail(f"process {pid} of the CLI's group is still running after the deadline")


async def _run(llm: llmplex.Client, mode: str) -> object:
    if mode == "sync":
        return llm.complete("claude-code:haiku", "hi", timeout=1)
    if mode == "async":
        return await llm.acomplete("claude-code:haiku", "hi", timeout=1)
    if mode == "stream":
        return list(llm.stream("claude-code:haiku", "hi", timeout=1))
    return [e async for e in llm.astream("claude-code:haiku", "hi", timeout=1)]


@pytest.mark.parametrize("mode", ["sync", "async", "stream", "astream"])
async def test_the_deadline_kills_the_whole_process_group(llm: llmplex.Client, fake_cli: FakeCLI, mode: str) -> None:
    fake_cli.scenario("slow")
    started = time.monotonic()
    with pytest.raises((LLMTimeoutError, LLMDeadlineExceededError)):
        await _run(llm, mode)
    assert time.monotonic() - started < 5
    _assert_group_killed(fake_cli)


def test_the_plugin_timeout_is_a_timeout_error(fake_cli: FakeCLI) -> None:
    from llmplex_claude_code.cli import create_client
    from llmplex_claude_code.errors import classify_error
    from llmplex_claude_code.failures import CLITimeoutError
    from llmplex_claude_code.settings import ClaudeCodeSettings

    fake_cli.scenario("slow")
    cli_client = create_client(ClaudeCodeSettings(cli_path=str(fake_cli.path)))
    payload = {"model": "haiku", "prompt": "hi", "stream": False}
    with pytest.raises(CLITimeoutError) as caught:
        cli_client.run(payload, timeout=0.5)
    error = classify_error(caught.value)
    assert isinstance(error, LLMTimeoutError) and error.retryable
    _assert_group_killed(fake_cli)


def test_missing_binary_names_the_install_command_and_cli_path(tmp_path: Path) -> None:
    llm = llmplex.Client(providers={"claude-code": {"cli_path": str(tmp_path / "nowhere" / "claude")}})
    with pytest.raises(LLMConfigurationError) as caught:
        llm.complete("claude-code:haiku", "hi")
    assert "npm install -g @anthropic-ai/claude-code" in str(caught.value) and "cli_path" in str(caught.value)


def test_unsupported_requests_fail_before_running(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    with pytest.raises(LLMConfigurationError, match="temperature"):
        llm.complete("claude-code:haiku", "hi", temperature=0.3)
    with pytest.raises(LLMConfigurationError, match="tools"):
        llm.complete("claude-code:haiku", "hi", tools=[{"name": "t", "parameters": {"type": "object"}}])
    with pytest.raises(LLMConfigurationError, match="provider_options"):
        llm.complete("claude-code:haiku", "hi", provider_options={"speed": "fast"})
    assert fake_cli.runs() == []


def test_extra_args_from_settings_and_provider_options(fake_cli: FakeCLI) -> None:
    llm = llmplex.Client(
        providers={
            "claude-code": {"cli_path": str(fake_cli.path), "extra_args": ["--effort", "low"], "tools": ["Read"]}
        }
    )
    llm.complete("claude-code:haiku", "hi", provider_options={"max_budget_usd": 0.5})
    argv = fake_cli.runs()[0]["argv"]
    assert argv[-4:] == ["--effort", "low", "--max-budget-usd", "0.5"]
    assert argv[argv.index("--tools") + 1] == "Read"


def test_version_detection(llm: llmplex.Client) -> None:
    assert llm.provider_client("claude-code").version() == "2.1.197"


def test_providers_command_shows_claude_code(fake_cli: FakeCLI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_CLI_PATH", str(fake_cli.path))
    out = CliRunner().invoke(cli, ["providers", "--check"], terminal_width=400).stdout
    line = next(line for line in out.splitlines() if "│ claude-code " in line)
    assert "llmplex-claude-code" in line and "yes" in line
    monkeypatch.setenv("CLAUDE_CODE_CLI_PATH", "/nonexistent/claude")
    out = CliRunner().invoke(cli, ["providers", "--check"], terminal_width=400).stdout
    assert "claude CLI not found" in out
