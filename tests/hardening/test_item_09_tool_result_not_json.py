"""Issue 12 item 9: a tool result with no JSON form is a tool error, and its ToolContext changes are undone."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import llmplex
from llmplex import ToolContext, ToolInvoked, hookimpl
from llmplex.providers.mock import MockBackend


class Opaque:
    """A value pydantic has no JSON form for."""


def _call(name: str, call_id: str = "c1") -> dict[str, str]:
    return {"name": name, "arguments": json.dumps({}), "id": call_id}


def _tool_results(backend: MockBackend) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in backend.calls[-1]["messages"] if m["role"] == "tool"}


def _circular() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


@pytest.mark.parametrize(
    ("result", "named"),
    [
        (Opaque(), "Opaque"),
        ({"rows": [1, Opaque()]}, "Opaque"),
        (b"\xff\xfe", "bytes"),
        (_circular(), "dict"),
        ("half a pair: \ud800", "str"),
    ],
    ids=["object", "nested-object", "bad-bytes", "circular", "lone-surrogate"],
)
def test_item_9_unserialisable_result_goes_back_as_tool_error(
    client: llmplex.Client, mock_backend: MockBackend, result: Any, named: str
) -> None:
    def fetch() -> Any:
        """Return something odd."""
        return result

    mock_backend.push(tool_calls=[_call("fetch")])
    mock_backend.push("done")
    response = client.complete("mock:m", "go", tools=[fetch])
    assert response.text == "done"
    content = _tool_results(mock_backend)["c1"]
    assert content.startswith("Error: tool 'fetch' returned a result that cannot be sent as JSON")
    assert named in content
    assert "0x" not in content  # no memory address of a str() fallback


def test_item_9_unserialisable_result_rolls_back_tool_context(
    client: llmplex.Client, mock_backend: MockBackend
) -> None:
    def grab(ctx: ToolContext) -> Any:
        """Change the state, then return a value that is not JSON."""
        ctx.state["cart"].append("A1")
        ctx.state["touched"] = True
        return Opaque()

    def keep(ctx: ToolContext) -> str:
        """A well-behaved tool."""
        ctx.state["cart"].append("B2")
        return "ok"

    context = ToolContext(state={"cart": []})
    mock_backend.push(tool_calls=[_call("grab", "bad"), _call("keep", "good")])
    mock_backend.push("done")
    client.complete("mock:m", "go", tools=[grab, keep], tool_context=context)
    assert context.state == {"cart": ["B2"]}
    results = _tool_results(mock_backend)
    assert "Opaque" in results["bad"]
    assert results["good"] == "ok"


def test_item_9_async_handler_result_rolls_back_and_reports() -> None:
    class Recorder:
        def __init__(self) -> None:
            self.events: list[ToolInvoked] = []

        @hookimpl
        def llmplex_event(self, event: llmplex.Event) -> None:
            if isinstance(event, ToolInvoked):
                self.events.append(event)

    recorder = Recorder()
    client = llmplex.Client(plugins=[recorder])
    mock_backend: MockBackend = client.provider_client("mock")

    async def grab(ctx: ToolContext) -> Any:
        """Change the state, then return a value that is not JSON."""
        ctx.state["n"] = ctx.state["n"] + 1
        return {"when": Opaque()}

    context = ToolContext(state={"n": 0})
    mock_backend.push(tool_calls=[_call("grab")])
    mock_backend.push("done")
    response = asyncio.run(client.acomplete("mock:m", "go", tools=[grab], tool_context=context))
    assert response.text == "done"
    assert context.state == {"n": 0}
    assert "Opaque" in _tool_results(mock_backend)["c1"]
    [event] = recorder.events
    assert event.error is not None and "Opaque" in event.error
