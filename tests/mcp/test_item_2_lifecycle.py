"""The lifecycle of MCP servers: started on first use, reused, ended with the client or the interpreter, never
silently empty; failures are typed errors with the server's stderr; tools/list_changed refreshes the list."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex import LLMConfigurationError, LLMDeadlineExceededError, LLMToolSourceError
from llmplex.mcp import MCPServer
from tests.mcp.conftest import BROKEN, TOOLBOX, call, processes_with, wait_gone, wait_seen


def broken(mode: str, token: str, **kwargs: Any) -> MCPServer:
    return MCPServer.stdio(
        sys.executable, [str(BROKEN), mode], name=f"broken-{mode}", env={"MCP_TEST_TOKEN": token}, **kwargs
    )


def test_item_2_started_on_first_use_and_reused(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer, token: str
) -> None:
    assert processes_with(token) == [] and not toolbox.running
    mock_backend.push(tool_calls=[call("add", {"a": 1, "b": 2})])
    mock_backend.push("3")
    client.complete("mock:m", "1+2", tools=[toolbox])
    first = processes_with(token)
    assert len(first) == 1 and toolbox.running
    mock_backend.push(tool_calls=[call("add", {"a": 3, "b": 4})])
    mock_backend.push("7")
    client.complete("mock:m", "3+4", tools=[toolbox.tools(include=["add"])])
    assert processes_with(token) == first


def test_item_2_the_process_and_its_children_end_with_the_client(
    mock_backend: Any, toolbox: MCPServer, token: str
) -> None:
    with llmplex.Client() as client:
        backend = client.provider_client("mock")
        backend.push(tool_calls=[call("spawn", {})])
        backend.push("spawned")
        client.complete("mock:m", "spawn a child", tools=[toolbox])
        child = int(next(m for m in backend.calls[-1]["messages"] if m["role"] == "tool")["content"])
        seen = wait_seen(token, count=2)
        assert child in seen and len(seen) == 2
    assert wait_gone(token) == [], "the server or its child outlived the client"
    assert not toolbox.running
    del mock_backend


def test_item_2_async_clients_close_their_servers(toolbox: MCPServer, token: str) -> None:
    async def main() -> None:
        async with llmplex.Client() as client:
            backend = client.provider_client("mock")
            backend.push(tool_calls=[call("add", {"a": 1, "b": 1})])
            backend.push("2")
            assert (await client.acomplete("mock:m", "1+1", tools=[toolbox])).text == "2"
            assert processes_with(token)

    asyncio.run(main())
    assert wait_gone(token) == [] and not toolbox.running


def test_item_2_a_server_used_as_a_context_manager_ends_with_the_block(toolbox: MCPServer, token: str) -> None:
    with toolbox:
        assert next(tool.name for tool in toolbox.list_tools(timeout=60)) == "add"
        assert toolbox.running
    assert wait_gone(token) == [] and not toolbox.running


def test_item_2_servers_end_at_interpreter_exit(token: str, tmp_path: Path) -> None:
    script = tmp_path / "leave_open.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            import llmplex
            env = {{"MCP_TEST_TOKEN": {token!r}}}
            server = llmplex.MCPServer.stdio(sys.executable, [{str(TOOLBOX)!r}, "stdio"], env=env)
            client = llmplex.Client()
            backend = client.provider_client("mock")
            backend.push(tool_calls=[{{"name": "spawn", "arguments": "{{}}", "id": "c1"}}])
            backend.push("spawned")
            client.complete("mock:m", "go", tools=[server])
            print("RUNNING", flush=True)
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "RUNNING" in done.stdout
    assert wait_gone(token) == [], "the server or its child outlived the interpreter"


def test_item_2_a_server_that_fails_to_start_is_a_typed_error_with_its_stderr(
    client: llmplex.Client, token: str
) -> None:
    with pytest.raises(LLMToolSourceError) as caught:
        client.complete("mock:m", "hi", tools=[broken("exit", token)], timeout=60)
    error = caught.value
    assert error.server == "broken-exit"
    assert "failed to start" in str(error) and "cannot open database" in str(error)
    assert "cannot open database" in error.stderr


def test_item_2_stderr_in_an_error_is_cut_to_its_end(client: llmplex.Client, token: str) -> None:
    with pytest.raises(LLMToolSourceError) as caught:
        client.complete("mock:m", "hi", tools=[broken("noisy", token)], timeout=60)
    stderr = caught.value.stderr
    assert stderr.startswith("...") and stderr.endswith("broken: the last words")
    assert len(stderr) <= 2003 and len(str(caught.value)) < 2600


def test_item_2_a_missing_command_is_a_typed_error(client: llmplex.Client) -> None:
    server = MCPServer.stdio("/nonexistent/mcp-server-xyz", name="ghost")
    with pytest.raises(LLMToolSourceError) as caught:
        client.complete("mock:m", "hi", tools=[server], timeout=60)
    assert "ghost" in str(caught.value) and "failed to start" in str(caught.value)
    assert "No such file" in str(caught.value) or "not found" in str(caught.value)


def test_item_2_a_server_that_never_answers_is_bounded_by_its_startup_timeout(
    client: llmplex.Client, token: str
) -> None:
    started = time.monotonic()
    with pytest.raises(LLMToolSourceError, match=r"startup_timeout of 1\.5 s"):
        client.complete("mock:m", "hi", tools=[broken("silent", token, startup_timeout=1.5)])
    assert time.monotonic() - started < 1.5 + 5  # the bound, with room for a busy machine
    assert wait_gone(token, 10) == []  # the half-started process is ended too


def test_item_2_the_call_deadline_bounds_starting_too(client: llmplex.Client, token: str) -> None:
    started = time.monotonic()
    with pytest.raises(LLMDeadlineExceededError, match="broken-silent"):
        client.complete("mock:m", "hi", tools=[broken("silent", token)], timeout=1.0)
    assert time.monotonic() - started < 1.0 + 5
    assert wait_gone(token, 10) == []


def test_item_2_a_server_with_no_tools_is_an_error_not_zero_tools(client: llmplex.Client, token: str) -> None:
    with pytest.raises(LLMToolSourceError, match="lists no tools"):
        client.complete("mock:m", "hi", tools=[broken("empty", token)], timeout=60)


def test_item_2_a_server_killed_between_calls_is_a_typed_error_then_restarts(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer, token: str
) -> None:
    toolbox.list_tools(timeout=60)
    (pid,) = processes_with(token)
    os.kill(pid, signal.SIGKILL)
    wait_gone(token)
    mock_backend.push(tool_calls=[call("add", {"a": 1, "b": 1})])
    with pytest.raises(LLMToolSourceError, match="toolbox"):
        client.complete("mock:m", "1+1", tools=[toolbox], timeout=60)
    mock_backend.push(tool_calls=[call("add", {"a": 1, "b": 1})])
    mock_backend.push("2")
    assert client.complete("mock:m", "1+1", tools=[toolbox], timeout=60).text == "2"


def test_item_2_tools_list_changed_refreshes_the_list(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer
) -> None:
    mock_backend.push(tool_calls=[call("unlock", {})])
    mock_backend.push("unlocked")
    client.complete("mock:m", "open", tools=[toolbox])
    assert "secret_door" not in [tool["name"] for tool in mock_backend.calls[0]["tools"]]
    end = time.monotonic() + 10
    while "secret_door" not in [tool.name for tool in toolbox.list_tools(timeout=30)] and time.monotonic() < end:
        time.sleep(0.05)
    mock_backend.push(tool_calls=[call("secret_door", {})])
    mock_backend.push("found it")
    assert client.complete("mock:m", "go through", tools=[toolbox]).text == "found it"
    assert "secret_door" in [tool["name"] for tool in mock_backend.calls[-2]["tools"]]
    assert [m["content"] for m in mock_backend.calls[-1]["messages"] if m["role"] == "tool"] == ["treasure"]


def test_item_2_without_the_sdk_the_error_says_what_to_install(
    client: llmplex.Client, toolbox: MCPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(LLMConfigurationError, match=r"llmplex\[mcp\]"):
        client.complete("mock:m", "hi", tools=[toolbox], timeout=30)
