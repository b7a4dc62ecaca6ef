"""MCP servers from code and config: stdio, streamable HTTP and SSE; mixed with local tools; picked; named."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex import LLMConfigurationError
from llmplex.mcp import MCPServer
from tests.mcp.conftest import BROKEN, TOOLBOX, call

SECRET = "sk-mcp-7f3a9c2e4b8d1f6a0c5e"


def declared(backend: Any) -> list[str]:
    """The tool names the model was offered in its first call."""
    return [tool["name"] for tool in backend.calls[0]["tools"]]


def shout(text: str) -> str:
    """Say it loudly."""
    return text.upper()


def test_item_1_stdio_server_mixed_with_a_local_function(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer
) -> None:
    mock_backend.push(tool_calls=[call("add", {"a": 1, "b": 2}), call("shout", {"text": "hi"}, "c2")])
    mock_backend.push("done")
    assert client.complete("mock:m", "go", tools=[toolbox, shout]).text == "done"
    assert declared(mock_backend)[:2] == ["add", "hang"] and "shout" in declared(mock_backend)
    assert [m["content"] for m in mock_backend.calls[-1]["messages"] if m["role"] == "tool"] == ["3", "HI"]


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_item_1_http_servers_streamable_and_sse(
    client: llmplex.Client,
    mock_backend: Any,
    transport: str,
    http_toolbox_url: str,
    sse_toolbox_url: str,
) -> None:
    url = http_toolbox_url if transport == "http" else sse_toolbox_url
    server = MCPServer.http(url, name="remote", headers={"Authorization": f"Bearer {SECRET}"}, transport=transport)  # type: ignore[arg-type]
    assert SECRET not in repr(server)
    mock_backend.push(tool_calls=[call("add", {"a": 20, "b": 22})])
    mock_backend.push("42")
    assert client.complete("mock:m", "sum", tools=[server], timeout=60).text == "42"
    assert [m["content"] for m in mock_backend.calls[-1]["messages"] if m["role"] == "tool"] == ["42"]
    assert server.running
    client.close()
    assert not server.running


def test_item_1_an_unreachable_http_server_is_a_typed_error(client: llmplex.Client) -> None:
    from tests.mcp.conftest import free_port

    server = MCPServer.http(f"http://127.0.0.1:{free_port()}/mcp", name="nowhere", startup_timeout=20)
    with pytest.raises(llmplex.LLMToolSourceError) as caught:
        client.complete("mock:m", "hi", tools=[server], timeout=30)
    assert caught.value.server == "nowhere" and "failed to start" in str(caught.value)


def test_item_1_servers_from_config_tables(tmp_path: Path, token: str, mock_backend: Any) -> None:
    config = tmp_path / "llmplex.toml"
    config.write_text(
        f"""
[mcp.servers.box]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(TOOLBOX))}, "stdio"]
env = {{ MCP_TEST_TOKEN = "{token}", API_TOKEN = "{SECRET}" }}

[mcp.servers.remote]
url = "http://127.0.0.1:9/mcp"
headers = {{ Authorization = "Bearer {SECRET}" }}
transport = "sse"
"""
    )
    with llmplex.Client(config) as client:
        backend = client.provider_client("mock")
        tables = client.config.mcp.servers
        assert tables["box"].kind == "stdio" and tables["remote"].kind == "sse"
        assert SECRET not in repr(client.config) + str(client.config.model_dump())
        assert SECRET not in repr(client.mcp_server("box")) + repr(client.mcp_server("remote"))
        assert client.mcp_server("box") is client.mcp_server("box")
        backend.push(tool_calls=[call("add", {"a": 2, "b": 2})])
        backend.push("4")
        assert client.complete("mock:m", "2+2", tools=[client.mcp_server("box")], timeout=60).text == "4"
        with pytest.raises(LLMConfigurationError, match=r"\[mcp.servers.nope\]"):
            client.mcp_server("nope")
    del mock_backend


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ({}, "either command"),
        ({"command": "x", "url": "http://h/mcp"}, "either command"),
        ({"url": "ftp://h/mcp"}, "http://"),
        ({"command": "x", "headers": {"a": "b"}}, "headers go with url"),
        ({"url": "http://h/mcp", "args": ["a"]}, "go with command"),
        ({"command": "x", "startup_timeout": -1}, "greater than 0"),
        ({"command": "x", "colour": "red"}, "colour"),
    ],
)
def test_item_1_bad_config_tables_say_what_is_wrong(table: dict[str, Any], problem: str) -> None:
    with pytest.raises(LLMConfigurationError) as caught:
        llmplex.Client(mcp={"servers": {"bad": table}})
    assert problem in str(caught.value) and "bad" in str(caught.value)


def test_item_1_include_and_exclude_pick_tools(client: llmplex.Client, mock_backend: Any, toolbox: MCPServer) -> None:
    mock_backend.push("no tools needed")
    client.complete("mock:m", "hi", tools=[toolbox.tools(include=["add", "lookup"])])
    assert declared(mock_backend) == ["add", "lookup"]
    mock_backend.push("no tools needed")
    client.complete("mock:m", "hi", tools=[toolbox.tools(exclude=["hang", "crash", "spawn"])])
    offered = [tool["name"] for tool in mock_backend.calls[-1]["tools"]]
    assert "hang" not in offered and "crash" not in offered and "add" in offered
    with pytest.raises(LLMConfigurationError, match="has no tool named 'nope'"):
        client.complete("mock:m", "hi", tools=[toolbox.tools(include=["add", "nope"])])
    with pytest.raises(LLMConfigurationError, match="leave no tool"):
        client.complete("mock:m", "hi", tools=[toolbox.tools(include=["add"], exclude=["add"])])
    with pytest.raises(LLMConfigurationError, match="list of tool names"):
        toolbox.tools(include="add")


def test_item_1_clashing_names_are_namespaced_by_server(
    client: llmplex.Client, mock_backend: Any, token: str, marks: Path
) -> None:
    def server(name: str) -> MCPServer:
        env = {"MCP_TEST_TOKEN": token, "TOOLBOX_MARK_DIR": str(marks)}
        return MCPServer.stdio(sys.executable, [str(TOOLBOX), "stdio"], name=name, env=env)

    first, second = server("north.box"), server("south")

    def lookup(city: str) -> str:
        """A local tool whose name one server's tool also has."""
        return f"local {city}"

    mock_backend.push(tool_calls=[call("north_box__add", {"a": 1, "b": 1}), call("lookup", {"city": "x"}, "c2")])
    mock_backend.push("ok")
    client.complete(
        "mock:m", "go", tools=[first.tools(include=["add", "picture"]), second.tools(include=["add", "lookup"]), lookup]
    )
    assert declared(mock_backend) == ["north_box__add", "picture", "south__add", "south__lookup", "lookup"]
    assert [m["content"] for m in mock_backend.calls[-1]["messages"] if m["role"] == "tool"] == ["2", "local x"]
    with pytest.raises(LLMConfigurationError, match="in tools= twice"):
        client.complete("mock:m", "go", tools=[first.tools(include=["add"]), first.tools(include=["add"])])


def test_item_1_secrets_stay_out_of_reprs_logs_events_and_errors(
    client: llmplex.Client, token: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = MCPServer.stdio(
        sys.executable, [str(BROKEN), "exit"], name="db", env={"MCP_TEST_TOKEN": token, "DB_PASSWORD": SECRET}
    )
    assert SECRET not in repr(server) + repr(server.config) + str(server.config.model_dump())
    caplog.set_level(logging.DEBUG)
    with pytest.raises(llmplex.LLMToolSourceError) as caught:
        client.complete("mock:m", "hi", tools=[server], timeout=60)
    error = caught.value
    assert "cannot open database" in str(error)
    shown = str(error) + repr(error) + error.stderr + str(error.context) + caplog.text
    assert SECRET not in shown


def test_item_1_import_llmplex_stays_light() -> None:
    code = (
        "import sys, llmplex; server = llmplex.MCPServer.stdio('x', name='x'); server.tools(include=['a']); "
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types', 'anyio'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def test_item_1_a_stream_offers_an_mcp_servers_tools(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer
) -> None:
    """``stream`` (no tool loop) offers the server's tools beside local ones; the call comes back as events."""
    mock_backend.push(tool_calls=[call("add", {"a": 1, "b": 2})])
    events = list(client.stream("mock:m", "go", tools=[toolbox, shout]))
    assert declared(mock_backend)[:2] == ["add", "hang"] and "shout" in declared(mock_backend)
    final = events[-1].response
    assert final is not None and [c.name for c in final.tool_calls] == ["add"]


async def test_item_1_an_async_stream_offers_an_mcp_servers_tools(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer
) -> None:
    mock_backend.push("no tools needed")
    events = [event async for event in client.astream("mock:m", "go", tools=[toolbox])]
    assert declared(mock_backend)[:2] == ["add", "hang"]
    assert events[-1].response is not None and events[-1].response.text == "no tools needed"
