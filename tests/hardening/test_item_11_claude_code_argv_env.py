"""Issue 12 item 11: request data cannot choose the claude command line, and the CLI gets a scrubbed environment."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest

import llmplex
from llmplex import LLMBadRequestError, LLMConfigurationError
from tests.plugins.claude_code.conftest import API_KEY, FakeCLI, fake_cli, llm

__all__ = ["fake_cli", "llm"]  # the claude-code suite's fixtures: a fake CLI and a client running it

PARENT_SECRETS = {
    "OPENAI_API_KEY": "sk-proj-parent-secret-1",
    "AWS_SECRET_ACCESS_KEY": "aws-parent-secret-2",
    "GITHUB_TOKEN": "ghp_parent_secret_3",
    "DATABASE_URL": "postgres://app:parent-secret-4@db/app",
}
PASSED = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
    "CLAUDE_CONFIG_DIR": "/tmp/claude-config",
}


@pytest.mark.parametrize(
    "options",
    [
        {"args": ["--dangerously-skip-permissions"]},
        {"args": ["--permission-mode", "bypassPermissions"]},
        {"args": ["--add-dir", "/"]},
        {"dangerously_skip_permissions": True},
        {"permission_mode": "bypassPermissions"},
    ],
)
def test_item_11_provider_options_cannot_reach_argv(
    llm: llmplex.Client, fake_cli: FakeCLI, options: dict[str, Any]
) -> None:
    with pytest.raises(LLMConfigurationError, match="provider_options") as caught:
        llm.complete("claude-code:haiku", "hi", provider_options=options)
    assert fake_cli.runs() == []
    assert "effort" in str(caught.value)  # names what is allowed


def test_item_11_allowed_options_become_their_flags(llm: llmplex.Client, fake_cli: FakeCLI) -> None:
    llm.complete(
        "claude-code:haiku",
        "hi",
        provider_options={"effort": "low", "max_budget_usd": 0.5, "fallback_model": "sonnet,claude-opus-4-1"},
    )
    argv = fake_cli.runs()[0]["argv"]
    assert argv[argv.index("--effort") + 1] == "low"
    assert argv[argv.index("--max-budget-usd") + 1] == "0.5"
    assert argv[argv.index("--fallback-model") + 1] == "sonnet,claude-opus-4-1"
    assert not any(arg.startswith("--dangerously") or arg == "--permission-mode" for arg in argv)
    for bad in (
        {"effort": "--dangerously-skip-permissions"},
        {"effort": "low --dangerously-skip-permissions"},
        {"fallback_model": "--dangerously-skip-permissions"},
        {"fallback_model": "haiku --add-dir /"},
        {"fallback_model": "haiku\x00"},
        {"max_budget_usd": "0.5 --dangerously-skip-permissions"},
        {"max_budget_usd": -1},
        {"max_budget_usd": float("inf")},
        {"max_budget_usd": True},
    ):
        with pytest.raises(LLMConfigurationError, match=r"provider_options.*effort"):
            llm.complete("claude-code:haiku", "hi", provider_options=bad)
    assert len(fake_cli.runs()) == 1


def _call(llm: llmplex.Client, how: str, **kwargs: Any) -> Any:
    if how == "complete":
        return llm.complete("claude-code:haiku", "hi", **kwargs).text
    if how == "acomplete":
        return asyncio.run(llm.acomplete("claude-code:haiku", "hi", **kwargs)).text
    return "".join(event.text or "" for event in llm.stream("claude-code:haiku", "hi", **kwargs))


@pytest.mark.parametrize("how", ["complete", "acomplete", "stream"])
def test_item_11_child_gets_a_scrubbed_environment(
    llm: llmplex.Client, fake_cli: FakeCLI, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    for name, value in {**PARENT_SECRETS, **PASSED}.items():
        monkeypatch.setenv(name, value)
    assert _call(llm, how) == "Hello there"
    [run] = fake_cli.runs()
    env = run["env"]
    for name in PARENT_SECRETS:
        assert name not in env
    assert not any(secret in str(env) for secret in PARENT_SECRETS.values())
    for name, value in PASSED.items():
        assert env[name] == value
    assert env["PATH"] == os.environ["PATH"] and env["HOME"] == os.environ["HOME"]
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "0" and env["ANTHROPIC_API_KEY"] == API_KEY
    assert not any(name.startswith("PYTEST") for name in env)


def test_item_11_pass_env_setting_adds_named_variables(fake_cli: FakeCLI, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in PARENT_SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    llm = llmplex.Client(
        providers={"claude-code": {"cli_path": str(fake_cli.path), "pass_env": ["AWS_*", "GITHUB_TOKEN"]}},
        throttle={"max_attempts": 1},
    )
    llm.complete("claude-code:haiku", "hi")
    env = fake_cli.runs()[0]["env"]
    assert env["AWS_REGION"] == "eu-west-1" and env["AWS_SECRET_ACCESS_KEY"] == PARENT_SECRETS["AWS_SECRET_ACCESS_KEY"]
    assert env["GITHUB_TOKEN"] == PARENT_SECRETS["GITHUB_TOKEN"]
    assert "OPENAI_API_KEY" not in env and "DATABASE_URL" not in env


@pytest.mark.parametrize("how", ["complete", "acomplete", "stream"])
def test_item_11_nul_byte_in_argv_is_a_bad_request(llm: llmplex.Client, fake_cli: FakeCLI, how: str) -> None:
    with pytest.raises(LLMBadRequestError, match="--system-prompt") as caught:
        _call(llm, how, system="be brief\x00--dangerously-skip-permissions")
    assert "NUL" in str(caught.value)
    assert fake_cli.runs() == []


@pytest.mark.parametrize("how", ["complete", "acomplete", "stream"])
def test_item_11_overlong_argv_is_a_bad_request(llm: llmplex.Client, fake_cli: FakeCLI, how: str) -> None:
    with pytest.raises(LLMBadRequestError, match="--system-prompt") as caught:
        _call(llm, how, system="x" * 200_000)
    assert "too long" in str(caught.value)
    wordy = {"type": "object", "properties": {"answer": {"type": "string", "description": "long " * 40_000}}}
    with pytest.raises(LLMBadRequestError, match="--json-schema"):
        llm.complete("claude-code:haiku", "hi", output=wordy)
    assert fake_cli.runs() == []
