"""The command line: ``llmplex complete --mcp NAME``, ``llmplex mcp list [NAME]`` (starts nothing) and ``--check``."""

from __future__ import annotations

import json
import sys
from collections import deque
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from llmplex.cli.main import cli
from llmplex.providers.mock import MockBackend
from tests.mcp.conftest import BROKEN, TOOLBOX, call, wait_gone

SECRET = "sk-cli-5e2d8c1b9a7f3e6d4c2b"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def config(tmp_path: Path, token: str) -> Path:
    """llmplex.toml with the toolbox, a server that fails, and one that would leave a file if it ever started."""
    started = tmp_path / "lazy-started"
    path = tmp_path / "llmplex.toml"
    path.write_text(
        f"""
[mcp.servers.box]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(TOOLBOX))}, "stdio"]
env = {{ MCP_TEST_TOKEN = "{token}", SERVICE_TOKEN = "{SECRET}" }}

[mcp.servers.broken]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(BROKEN))}, "exit"]
env = {{ MCP_TEST_TOKEN = "{token}" }}

[mcp.servers.lazy]
command = {json.dumps(sys.executable)}
args = ["-c", {json.dumps(f"open({str(started)!r}, 'w')")}]

[mcp.servers.web]
url = "http://127.0.0.1:9/mcp"
headers = {{ Authorization = "Bearer {SECRET}" }}
"""
    )
    return path


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> deque[dict[str, Any]]:
    """Answers for the mock model of the client the CLI builds: each call takes the next one."""
    script: deque[dict[str, Any]] = deque()
    take = MockBackend.take

    def scripted_take(self: MockBackend, payload: dict[str, Any]) -> Any:
        if script:
            self.push(**script.popleft())
        return take(self, payload)

    monkeypatch.setattr(MockBackend, "take", scripted_take)
    return script


def test_item_4_complete_with_mcp_runs_the_tool_loop(config: Path, token: str, scripted: deque[dict[str, Any]]) -> None:
    scripted.extend([{"tool_calls": [call("add", {"a": 2, "b": 2})]}, {"text": "2 + 2 = 4"}])
    code, out, err = invoke("complete", "-m", "mock:m", "--mcp", "box", "what is 2 + 2?")
    assert (code, out) == (0, "2 + 2 = 4\n"), err
    assert "[answered by mock:m]" in err
    assert wait_gone(token) == [], "the server outlived the command"


def test_item_4_complete_with_an_unknown_server_says_how_to_add_it(config: Path) -> None:
    code, _, err = invoke("complete", "-m", "mock:m", "--mcp", "nope", "hi")
    assert code != 0 and "[mcp.servers.nope]" in err and "box" in err


def test_item_4_mcp_list_shows_the_config_and_starts_nothing(config: Path, tmp_path: Path, token: str) -> None:
    code, out, err = invoke("mcp", "list")
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["box", "broken", "lazy", "web"]
    assert "stdio: " in lines[0] and "SERVICE_TOKEN=***" in lines[0] and "(headers: Authorization)" in lines[3]
    assert SECRET not in out + err
    assert not (tmp_path / "lazy-started").exists()
    code, out, _ = invoke("mcp", "list", "web")
    assert code == 0 and out.startswith("web: http: http://127.0.0.1:9/mcp")
    code, _, err = invoke("mcp", "list", "nope")
    assert code != 0 and "no MCP server named 'nope'" in err


def test_item_4_mcp_list_check_starts_them_and_shows_status_and_tools(config: Path, token: str) -> None:
    code, out, err = invoke("mcp", "list", "--check", "box", "broken")
    assert code == 1, err
    box, broken = out.split("\nbroken: ", 1)
    assert "status: ok, 9 tools" in box and "- add: Add two whole numbers." in box and "- hang" in box
    assert "status: failed: LLMToolSourceError" in broken and "cannot open database" in broken
    assert SECRET not in out + err
    assert wait_gone(token) == [], "a checked server was left running"
    code, out, _ = invoke("mcp", "list", "--check", "box")
    assert code == 0 and "status: ok" in out
    assert wait_gone(token) == []
