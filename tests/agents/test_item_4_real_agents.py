"""Issue 32 item 4: the real Claude Code and Codex CLIs (npm) against ``llmplex serve``, non-interactively.

Behind the gateway: the fault server as an OpenAI-wire upstream, a scripted Chat Completions server asking for
one of the agent's own tools, the fake Anthropic server, and (tests/agents/test_item_4_local_model.py) the real
local model. Each agent answers one streamed turn, and runs a harmless command of its own in a temporary
directory and answers from its output, on a model of another family than its own.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmplex.testing import Reply
from llmplex.types import ToolCall
from tests.agents.conftest import agents_config
from tests.agents.real_cli import cli, recipe, run_claude, run_codex
from tests.agents.scripted import ScriptedChat, scripted_chat
from tests.gateway.fake_anthropic import FakeAnthropic
from tests.gateway.harness import Gateway, running_gateway
from tests.plugins.anthropic.wire import stream_body
from tests.support.fault_server import FaultServer
from tests.support.faults import Fault

MARKER = "llmplex-tool-ok"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def scripted() -> Iterator[ScriptedChat]:
    with scripted_chat(Reply(text="All done.")) as server:
        yield server


@pytest.fixture
def agent_gateway(fault_server: FaultServer, upstream: FakeAnthropic, scripted: ScriptedChat) -> Iterator[Gateway]:
    extra = {"scripted": {"plugin": "openai", "base_url": scripted.url, "api": "chat", "api_key": "sk-scripted"}}
    with running_gateway(agents_config(fault_server, upstream, providers=extra)) as gateway:
        yield gateway


def _events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def _streamed(gateway: Gateway, endpoint: str) -> list[bool]:
    return [record.stream for record in gateway.recorder.records if record.endpoint == endpoint]


def test_item_4_claude_code_streams_one_turn_from_an_openai_wire_model(
    agent_gateway: Gateway, fault_server: FaultServer, workdir: Path
) -> None:
    fault_server.enqueue(*[Fault.ok(text="Hello from upstream") for _ in range(4)])
    done = run_claude(agent_gateway, "faulty:gpt-4o-mini", "Say hello", workdir)
    assert done.returncode == 0, done.stderr[-2000:]
    events = _events(done.stdout)
    assert events[-1]["type"] == "result" and events[-1]["result"] == "Hello from upstream"
    assert any(e["type"] == "stream_event" for e in events)  # partial messages: the answer came streamed
    assert True in _streamed(agent_gateway, "messages")
    assert fault_server.requests[-1].body["model"] == "gpt-4o-mini"


def test_item_4_claude_code_runs_its_own_tool_on_a_model_that_is_not_claude(
    agent_gateway: Gateway, scripted: ScriptedChat, workdir: Path
) -> None:
    bash = ToolCall(id="call_1", name="Bash", arguments=json.dumps({"command": f"echo {MARKER}", "description": "x"}))
    scripted.replies.append(Reply(tool_calls=(bash,)))
    done = run_claude(agent_gateway, "scripted:gpt-4o-mini", "Print the marker.", workdir, "Bash")
    assert done.returncode == 0, done.stderr[-2000:]
    assert _events(done.stdout)[-1]["result"] == "All done."
    answered = [body for body in scripted.bodies if any(m["role"] == "tool" for m in body["messages"])]
    result = next(m for m in answered[0]["messages"] if m["role"] == "tool")
    assert result["tool_call_id"] == "call_1" and MARKER in json.dumps(result["content"])


def test_item_4_codex_streams_one_turn_from_an_openai_responses_upstream(
    agent_gateway: Gateway, fault_server: FaultServer, workdir: Path
) -> None:
    fault_server.enqueue(*[Fault.ok(text="Hello from upstream") for _ in range(4)])
    done = run_codex(agent_gateway, "faultyresp:gpt-5.1-codex", "Say hello", workdir)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("Hello from upstream")
    sent = fault_server.requests[-1]
    assert sent.path == "/v1/responses" and (sent.body["store"], sent.body["include"]) == (
        False,
        ["reasoning.encrypted_content"],
    )
    assert _streamed(agent_gateway, "responses") == [True]


def test_item_4_codex_runs_its_own_tool_on_a_claude_model(
    agent_gateway: Gateway, upstream: FakeAnthropic, workdir: Path
) -> None:
    command = json.dumps({"cmd": f"echo {MARKER}"})
    call = {"tool_use": ("toolu_1", "exec_command"), "json": [command[:10], command[10:]]}
    upstream.reply_stream(stream_body([call], stop_reason="tool_use"))
    upstream.reply_stream(stream_body([{"text": ["All ", "done."]}]))
    done = run_codex(agent_gateway, "anthropic:claude-sonnet-4-6", "Print the marker.", workdir)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("All done.")
    second = upstream.bodies[1]["messages"]
    result = next(
        block
        for turn in second
        if turn["role"] == "user"
        for block in turn["content"]
        if block.get("type") == "tool_result"
    )
    assert result["tool_use_id"] == "toolu_1" and MARKER in json.dumps(result["content"])


def test_item_4_codex_has_no_chat_completions_mode_left(agent_gateway: Gateway, workdir: Path) -> None:
    """What the Coding agents page says: Codex 0.171 refuses ``wire_api = "chat"`` itself, before any request."""
    home = workdir.parent / "codex-chat-home"
    home.mkdir()
    config = recipe("codex-config").replace('wire_api = "responses"', 'wire_api = "chat"')
    (home / "config.toml").write_text(config.replace("http://127.0.0.1:4000", agent_gateway.url), encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "CODEX_HOME": str(home), "LLMPLEX_API_KEY": "unused"}
    done = subprocess.run(
        [cli("codex"), "exec", "--skip-git-repo-check", "Say hello"],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0 and 'wire_api = "chat"` is no longer supported' in done.stdout + done.stderr
    assert agent_gateway.recorder.records == []
