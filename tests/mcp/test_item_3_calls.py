"""MCP tool calls under the tool loop's promises: deadlines, error results, crashes, schema checks, content parts."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex import LLMDeadlineExceededError, ToolInvoked, hookimpl
from llmplex.errors import LLMToolSourceError
from llmplex.mcp import MCPServer
from tests.mcp.conftest import call


class Recorder:
    """Keeps every ToolInvoked event."""

    def __init__(self) -> None:
        self.events: list[ToolInvoked] = []

    @hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        if isinstance(event, ToolInvoked):
            self.events.append(event)


def tool_messages(backend: Any, index: int = -1) -> list[dict[str, Any]]:
    return [m for m in backend.calls[index]["messages"] if m["role"] == "tool"]


def wait_for(path: Path, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < end:
        time.sleep(0.05)
    return path.exists()


def test_item_3_a_tool_result_goes_back_to_the_model(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer
) -> None:
    mock_backend.push(tool_calls=[call("add", {"a": 2, "b": 40})])
    mock_backend.push("42")
    response = client.complete("mock:m", "2 + 40?", tools=[toolbox])
    assert response.text == "42"
    assert tool_messages(mock_backend)[0]["content"] == "42"


@pytest.mark.parametrize("asynchronous", [False, True])
def test_item_3_a_hanging_server_ends_the_call_at_its_deadline_and_the_request_is_cancelled_there(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer, marks: Path, asynchronous: bool
) -> None:
    def run(prompt: str, timeout: float) -> object:
        if asynchronous:
            return asyncio.run(client.acomplete("mock:m", prompt, tools=[toolbox], timeout=timeout))
        return client.complete("mock:m", prompt, tools=[toolbox], timeout=timeout)

    # Every first use (the server's start, the plugin's load, the schema validator's import, the
    # first MCP call) is done by an untimed tool call first, so the 1.5 s deadline can only fall
    # on the hanging request, however busy the machine.
    mock_backend.push(tool_calls=[call("add", {"a": 1, "b": 1})])
    mock_backend.push("2")
    assert getattr(run("warm up", 60), "text", None) == "2"
    mock_backend.push(tool_calls=[call("hang", {})])
    started = time.monotonic()
    with pytest.raises(LLMDeadlineExceededError) as caught:
        run("wait", 1.5)
    took = time.monotonic() - started
    assert 1.4 <= took < 1.5 + 5, took  # at the deadline (with room for a busy machine), not the hour it hangs
    assert "hang" in str(caught.value)
    # the server process may be behind the client that gave up: it writes its marks when it gets to them
    assert wait_for(marks / "hang-started"), "the server never started the hanging call"
    assert wait_for(marks / "hang-cancelled"), "the server never saw notifications/cancelled"
    assert toolbox.running  # the session survives a cancelled request


def test_item_3_an_error_result_is_a_tool_error_for_the_model(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer
) -> None:
    recorder = Recorder()
    client.host.register_observer(recorder)
    mock_backend.push(tool_calls=[call("lookup", {"city": "Atlantis"})])
    mock_backend.push(tool_calls=[call("lookup", {"city": "Paris"}, "c2")])
    mock_backend.push("sunny in Paris")
    assert client.complete("mock:m", "weather?", tools=[toolbox]).text == "sunny in Paris"
    first = tool_messages(mock_backend, 1)[0]["content"]
    assert first.startswith("Error: ") and "only Paris is known" in first
    assert tool_messages(mock_backend)[-1]["content"] == "Paris: 18 C, sunny"
    assert recorder.events[0].error is not None and recorder.events[1].error is None


def test_item_3_a_server_crashing_mid_call_is_a_typed_error_with_its_stderr(
    client: llmplex.Client, mock_backend: Any, token: str, marks: Path
) -> None:
    server = MCPServer.stdio(
        sys.executable,
        [str(Path(__file__).parent / "servers" / "toolbox.py")],
        name="crashy",
        env={"MCP_TEST_TOKEN": token, "TOOLBOX_SECRET": "tok-9f8e7d6c5b4a39281706"},
    )
    mock_backend.push(tool_calls=[call("crash", {"note": "mid-call"})])
    with pytest.raises(LLMToolSourceError) as caught:
        client.complete("mock:m", "crash", tools=[server], timeout=60)
    error = caught.value
    assert error.server == "crashy"
    assert "crashy" in str(error) and "crash" in str(error)
    assert "crashing on purpose (mid-call)" in error.stderr and "crashing on purpose" in str(error)
    assert "tok-9f8e7d6c5b4a39281706" not in str(error) + error.stderr + repr(error)
    assert not server.running
    # the next use starts it again
    mock_backend.push(tool_calls=[call("add", {"a": 1, "b": 1})])
    mock_backend.push("2")
    assert client.complete("mock:m", "1+1", tools=[server], timeout=60).text == "2"


def test_item_3_arguments_are_checked_against_the_input_schema_before_sending(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer
) -> None:
    recorder = Recorder()
    client.host.register_observer(recorder)
    mock_backend.push(tool_calls=[call("add", {"a": "two", "b": 2}), call("add", {"a": 1}, "c2")])
    mock_backend.push("fixed")
    client.complete("mock:m", "add", tools=[toolbox])
    bad_type, missing = (m["content"] for m in tool_messages(mock_backend))
    assert bad_type.startswith("Error: invalid arguments for 'add'") and "integer" in bad_type
    assert missing.startswith("Error: invalid arguments for 'add'") and "'b' is a required property" in missing
    assert [event.duration for event in recorder.events] == [0.0, 0.0]  # never sent: no handler time


def test_item_3_an_image_result_becomes_a_part_the_next_turn_carries(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer
) -> None:
    mock_backend.push(tool_calls=[call("picture", {})])
    mock_backend.push("a red square")
    assert client.complete("mock:m", "draw", tools=[toolbox]).text == "a red square"
    messages = mock_backend.calls[-1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[2]["content"] == "a 2x2 red square"
    pieces = messages[3]["content"]
    assert "Attachments returned by tool 'picture'" in pieces[0]
    assert pieces[1]["type"] == "image" and pieces[1]["media_type"] == "image/png"


def test_item_3_structured_content_is_kept(client: llmplex.Client, mock_backend: Any, toolbox: MCPServer) -> None:
    recorder = Recorder()
    client.host.register_observer(recorder)
    mock_backend.push(tool_calls=[call("forecast", {"city": "Oslo"})])
    mock_backend.push("cold")
    client.complete("mock:m", "forecast", tools=[toolbox])
    assert recorder.events[0].result["structured"] == {"city": "Oslo", "high": 21, "low": 12}
    assert '"high": 21' in tool_messages(mock_backend)[0]["content"]


def test_item_3_results_of_every_content_kind_become_llmplex_content() -> None:
    import base64

    import mcp_types as types

    from llmplex.mcp.results import tool_result
    from tests.mcp.servers.toolbox import png

    image = base64.b64encode(png()).decode()
    wav = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 24).decode()
    result = types.CallToolResult(
        content=[
            types.TextContent(text="hello"),
            types.ImageContent(data=image, mime_type="image/png"),
            types.AudioContent(data=wav, mime_type="audio/wav"),
            types.EmbeddedResource(resource=types.TextResourceContents(uri="file:///a.txt", text="inside")),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(uri="file:///b.png", blob=image, mime_type="image/png")
            ),
            types.ImageContent(data="not base64!!", mime_type="image/png"),
            types.ImageContent(data=image, mime_type="image/jpeg"),  # lies about its type
            types.EmbeddedResource(
                resource=types.BlobResourceContents(uri="file:///c.bin", blob=image, mime_type="application/x-thing")
            ),
            types.ResourceLink(uri="file:///d.txt", name="d"),
        ],
        structured_content={"k": 1},
    )
    converted = tool_result(result)
    assert [type(p).__name__ for p in converted.parts] == ["Image", "Audio", "Image"]
    assert "hello" in converted.text and "[resource file:///a.txt]\ninside" in converted.text
    assert "not valid base64" in converted.text and "image/jpeg" in converted.text and "not sent" in converted.text
    assert "application/x-thing" in converted.text and "resource link file:///d.txt" in converted.text
    assert converted.structured == {"k": 1} and not converted.is_error


def test_item_3_cancelling_the_caller_cancels_the_request_at_the_server(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer, marks: Path
) -> None:
    toolbox.list_tools(timeout=60)
    mock_backend.push(tool_calls=[call("hang", {})])

    async def main() -> None:
        task = asyncio.ensure_future(client.acomplete("mock:m", "wait", tools=[toolbox]))  # no deadline at all
        for _ in range(400):
            if (marks / "hang-started").exists():
                break
            await asyncio.sleep(0.025)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert wait_for(marks / "hang-cancelled"), "the server never saw notifications/cancelled"
    assert toolbox.running


def test_item_3_a_protocol_error_is_a_typed_error_and_the_session_goes_on(
    client: llmplex.Client, mock_backend: Any, toolbox: MCPServer
) -> None:
    mock_backend.push(tool_calls=[call("broken_protocol", {})])
    with pytest.raises(LLMToolSourceError) as caught:
        client.complete("mock:m", "break", tools=[toolbox], timeout=60)
    assert "answered with error -32603" in str(caught.value) and "internals failed" in str(caught.value)
    assert caught.value.server == "toolbox" and toolbox.running
    mock_backend.push(tool_calls=[call("add", {"a": 1, "b": 2})])
    mock_backend.push("3")
    assert client.complete("mock:m", "1+2", tools=[toolbox], timeout=60).text == "3"
