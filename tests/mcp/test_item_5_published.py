"""Published MCP servers through the tool loop: ``mcp-server-time`` (PyPI) and the protocol's own conformance
server ``@modelcontextprotocol/server-everything`` (npm), driven by a scripted model and once by the real local one.

(The SDK-written servers of tests/mcp/servers cover stdio and streamable HTTP, a hang, a crash mid-call, an error
result, an image and a changing tool list: see the item 1-3 tests.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import pytest

import llmplex
from llmplex import LLMDeadlineExceededError, ToolInvoked, hookimpl
from llmplex.mcp import MCPServer
from tests.live.conftest import LOCAL_MODEL, live_client, local_server  # noqa: F401 - the live fixtures
from tests.mcp.conftest import call, children, everything_server, processes_with, wait_seen

SECRET = "sk-echoed-3c9a1e7f5b2d8c4a6e0f"


class Recorder:
    """Keeps every ToolInvoked event."""

    def __init__(self) -> None:
        self.events: list[ToolInvoked] = []

    @hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        if isinstance(event, ToolInvoked):
            self.events.append(event)


def tool_contents(backend: Any) -> list[str]:
    return [m["content"] for m in backend.calls[-1]["messages"] if m["role"] == "tool"]


@pytest.fixture
def time_server(token: str) -> MCPServer:
    """mcp-server-time from PyPI (a dependency of the test environment)."""
    return MCPServer.stdio(sys.executable, ["-m", "mcp_server_time"], name="time", env={"MCP_TEST_TOKEN": token})


@pytest.fixture
def everything(token: str) -> MCPServer:
    """@modelcontextprotocol/server-everything from npm."""
    env = {"MCP_TEST_TOKEN": token, "API_KEY": SECRET}
    return MCPServer.stdio(str(everything_server()), ["stdio"], name="everything", env=env)


def test_item_5_mcp_server_time_through_the_tool_loop(
    client: llmplex.Client, mock_backend: Any, time_server: MCPServer
) -> None:
    recorder = Recorder()
    client.host.register_observer(recorder)
    arguments = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    mock_backend.push(tool_calls=[call("convert_time", arguments)])
    mock_backend.push("It is 21:00 in Tokyo.")
    response = client.complete("mock:m", "Noon UTC in Tokyo?", tools=[time_server], timeout=60)
    assert response.text == "It is 21:00 in Tokyo."
    assert [tool["name"] for tool in mock_backend.calls[0]["tools"]] == ["get_current_time", "convert_time"]
    assert "T21:00:00+09:00" in tool_contents(mock_backend)[0]
    assert recorder.events[0].result["structured"]["time_difference"] == "+9.0h"


def test_item_5_server_everything_through_the_tool_loop(
    client: llmplex.Client, mock_backend: Any, everything: MCPServer
) -> None:
    recorder = Recorder()
    client.host.register_observer(recorder)
    mock_backend.push(
        tool_calls=[
            call("get-sum", {"a": 19, "b": 23}),
            call("get-tiny-image", {}, "c2"),
            call("get-structured-content", {"location": "New York"}, "c3"),
            call("echo", {"message": 42}, "c4"),  # not a string: refused before it is sent
        ]
    )
    mock_backend.push("done")
    assert client.complete("mock:m", "try everything", tools=[everything], timeout=60).text == "done"
    total, image, structured, echo = tool_contents(mock_backend)
    assert "42" in total
    assert structured.strip()
    assert "MCP logo" in image
    assert echo.startswith("Error: invalid arguments for 'echo'")
    attachments = mock_backend.calls[-1]["messages"][-1]
    assert attachments["role"] == "user" and attachments["content"][1]["media_type"] == "image/png"
    assert isinstance(recorder.events[2].result["structured"], dict) and recorder.events[2].result["structured"]


def test_item_5_server_everything_long_operation_ends_at_the_deadline(
    client: llmplex.Client, mock_backend: Any, everything: MCPServer
) -> None:
    everything.list_tools(timeout=60)
    mock_backend.push(tool_calls=[call("trigger-long-running-operation", {"duration": 60, "steps": 5})])
    started = time.monotonic()
    with pytest.raises(LLMDeadlineExceededError, match="trigger-long-running-operation"):
        client.complete("mock:m", "go", tools=[everything], timeout=2)
    assert time.monotonic() - started < 2 + 5  # the deadline, not the minute the operation takes
    mock_backend.push(tool_calls=[call("get-sum", {"a": 1, "b": 2})])
    mock_backend.push("3")
    assert client.complete("mock:m", "1+2", tools=[everything], timeout=30).text == "3"  # the session goes on


def test_item_5_a_server_echoing_its_environment_leaks_no_secret_into_events(
    client: llmplex.Client, mock_backend: Any, everything: MCPServer
) -> None:
    recorder = Recorder()
    client.host.register_observer(recorder)
    mock_backend.push(tool_calls=[call("get-env", {})])
    mock_backend.push("ok")
    client.complete("mock:m", "env?", tools=[everything], timeout=60)
    assert "API_KEY" in str(recorder.events[0].result)
    assert SECRET not in str(recorder.events[0].result) + repr(recorder.events[0])


def test_item_5_the_real_local_model_calls_an_mcp_tool(
    live_client: llmplex.Client,  # noqa: F811 - the live fixture imported above
    time_server: MCPServer,
) -> None:
    recorder = Recorder()
    live_client.host.register_observer(recorder)
    response = live_client.complete(
        LOCAL_MODEL,
        "Convert 12:00 from the UTC timezone to the Asia/Tokyo timezone. Use the convert_time tool.",
        tools=[time_server.tools(include=["convert_time"])],
        temperature=0,
        max_tokens=200,
        max_tool_rounds=3,
        timeout=240,
    )
    live_client.close()
    assert recorder.events, f"the model called no tool; it said {response.text!r}"
    first = recorder.events[0]
    assert first.name == "convert_time" and first.error is None, first
    assert first.result["structured"]["target"]["datetime"].endswith("T21:00:00+09:00")
    assert "21" in response.text


def test_item_5_the_leak_check_sees_a_process_left_behind(token: str) -> None:
    """The autouse check of tests/mcp/conftest.py finds a leftover by its marker and as a child of this process."""
    leftover = subprocess.Popen(["sleep", "30"], env={"MCP_TEST_TOKEN": token, "PATH": os.environ["PATH"]})
    try:
        # Popen returns once exec has begun; the kernel fills /proc/PID/environ a moment later, so wait for it.
        assert wait_seen(token) == [leftover.pid]
        assert leftover.pid in children()
    finally:
        leftover.kill()
        leftover.wait()
    assert processes_with(token) == [] and leftover.pid not in children()
