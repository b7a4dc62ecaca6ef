"""The tool-calling loop on the mock provider: runs handlers, sends results back, contains failures."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

import llmplex
from llmplex import LLMToolLoopError, Tool, ToolContext, ToolInvoked, hookimpl
from llmplex.providers.mock import MockBackend


class Recorder:
    """An observer plugin keeping every ToolInvoked event."""

    def __init__(self) -> None:
        self.events: list[ToolInvoked] = []

    @hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        if isinstance(event, ToolInvoked):
            self.events.append(event)


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def call(name: str, arguments: Any, call_id: str = "c1") -> dict[str, str]:
    return {
        "name": name,
        "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
        "id": call_id,
    }


def tool_messages(backend: MockBackend, index: int = -1) -> list[dict[str, Any]]:
    return [m for m in backend.calls[index]["messages"] if m["role"] == "tool"]


def test_loop_runs_the_tool_and_asks_again(client: llmplex.Client, mock_backend: MockBackend) -> None:
    mock_backend.push(tool_calls=[call("add", {"a": 2, "b": "3"})], usage={"input_tokens": 5, "output_tokens": 2})
    mock_backend.push("2 + 3 = 5", usage={"input_tokens": 9, "output_tokens": 4})
    response = client.complete("mock:m", "What is 2 + 3?", tools=[add])
    assert response.text == "2 + 3 = 5"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (14, 6)
    second = mock_backend.calls[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool"]
    assert second[1]["tool_calls"][0]["name"] == "add"
    assert second[2] == {"role": "tool", "content": "5", "tool_call_id": "c1", "name": "add"}


def test_failures_go_back_to_the_model_as_tool_results(client: llmplex.Client, mock_backend: MockBackend) -> None:
    def explode(reason: str) -> str:
        """Always fails."""
        raise RuntimeError(reason)

    mock_backend.push(
        tool_calls=[
            call("add", {"a": 1}, "bad-args"),
            call("nope", {}, "unknown"),
            call("explode", {"reason": "boom"}, "raises"),
            call("add", "{not json", "not-json"),
            call("add", "[1, 2]", "not-object"),
        ]
    )
    mock_backend.push("sorry")
    response = client.complete("mock:m", "go", tools=[add, explode])
    assert response.text == "sorry"
    results = {m["tool_call_id"]: m["content"] for m in tool_messages(mock_backend)}
    assert results["bad-args"] == "Error: invalid arguments for 'add': b: Field required"
    assert results["unknown"] == "Error: unknown tool 'nope'; available tools: add, explode"
    assert results["raises"] == "Error: tool 'explode' failed: RuntimeError: boom"
    assert results["not-json"].startswith("Error: the arguments of 'add' are not valid JSON")
    assert results["not-object"] == "Error: the arguments of 'add' must be a JSON object"


def test_explicit_declarations_are_validated_against_their_schema(
    client: llmplex.Client, mock_backend: MockBackend
) -> None:
    seen: list[dict[str, Any]] = []

    def lookup(**kwargs: Any) -> dict[str, Any]:
        seen.append(kwargs)
        return {"found": True, "sku": kwargs["sku"]}

    declaration = {
        "name": "lookup",
        "description": "Find a product.",
        "parameters": {
            "type": "object",
            "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}$"}},
            "required": ["sku"],
        },
        "handler": lookup,
    }
    mock_backend.push(
        tool_calls=[call("lookup", {"sku": "abc"}, "x"), call("lookup", {"sku": "ABC"}, "y"), call("lookup", {}, "z")]
    )
    mock_backend.push("done")
    client.complete("mock:m", "find ABC", tools=[declaration])
    results = {m["tool_call_id"]: m["content"] for m in tool_messages(mock_backend)}
    assert results["x"] == "Error: invalid arguments for 'lookup': sku: 'abc' does not match '^[A-Z]{3}$'"
    assert json.loads(results["y"]) == {"found": True, "sku": "ABC"}
    assert results["z"] == "Error: invalid arguments for 'lookup': (arguments): 'sku' is a required property"
    assert seen == [{"sku": "ABC"}]


def test_max_tool_rounds_raises_the_loop_error(client: llmplex.Client, mock_backend: MockBackend) -> None:
    for _ in range(4):
        mock_backend.push(tool_calls=[call("add", {"a": 1, "b": 1})])
    with pytest.raises(LLMToolLoopError, match=r"still asked for tools \(add\) after max_tool_rounds=3"):
        client.complete("mock:m", "loop", tools=[add], max_tool_rounds=3)
    assert len(mock_backend.calls) == 4


def test_tools_without_handlers_are_returned(client: llmplex.Client, mock_backend: MockBackend) -> None:
    declared = Tool(name="search", parameters={"type": "object", "properties": {"q": {"type": "string"}}})
    mock_backend.push(tool_calls=[call("search", {"q": "x"})])
    response = client.complete("mock:m", "search x", tools=[declared, add])
    assert [c.name for c in response.tool_calls] == ["search"]
    assert len(mock_backend.calls) == 1


def test_tool_invoked_events(mock_backend: MockBackend) -> None:
    recorder = Recorder()
    client = llmplex.Client(plugins=[recorder])
    backend: MockBackend = client.provider_client("mock")
    backend.push(tool_calls=[call("add", {"a": 2, "b": 2}, "ok"), call("add", {"a": 2}, "bad")])
    backend.push("4")
    client.complete("mock:m", "2+2", tools=[add])
    ok, bad = recorder.events
    assert (ok.name, ok.arguments, ok.result, ok.error, ok.provider, ok.model) == (
        "add",
        {"a": 2, "b": 2},
        4,
        None,
        "mock",
        "m",
    )
    assert ok.duration >= 0 and ok.request_id.startswith("req-")
    assert bad.error == "invalid arguments for 'add': b: Field required" and bad.result is None


def meeting_tool() -> Any:
    """A tool whose calls return only once two of them have started: only possible when they run together."""
    barrier = asyncio.Barrier(2)

    async def meet(name: str) -> str:
        """Meet another call."""
        await asyncio.wait_for(barrier.wait(), timeout=5)
        return f"met {name}"

    return meet


def test_async_handlers_in_one_turn_run_concurrently(mock_backend: MockBackend) -> None:
    client = llmplex.Client()
    backend: MockBackend = client.provider_client("mock")

    async def scenario() -> list[str]:
        backend.push(tool_calls=[call("meet", {"name": "a"}, "1"), call("meet", {"name": "b"}, "2")])
        backend.push("done")
        await asyncio.wait_for(client.acomplete("mock:m", "meet", tools=[meeting_tool()]), timeout=5)
        return [m["content"] for m in tool_messages(backend)]

    assert asyncio.run(scenario()) == ["met a", "met b"]
    backend.push(tool_calls=[call("meet", {"name": "c"}, "1"), call("meet", {"name": "d"}, "2")])
    backend.push("done")
    client.complete("mock:m", "meet", tools=[meeting_tool()], timeout=5)  # sync caller: async handlers gathered too
    assert [m["content"] for m in tool_messages(backend)] == ["met c", "met d"]


class Order(BaseModel):
    item: str
    quantity: int


def test_tools_and_structured_output_together(client: llmplex.Client, mock_backend: MockBackend) -> None:
    def stock(item: str) -> int:
        """Units in stock."""
        return 3

    mock_backend.push(tool_calls=[call("stock", {"item": "pen"})])
    mock_backend.push(tool_calls=[call("Order", {"item": "pen", "quantity": 3}, "final")])
    response = client.complete("mock:m", "Order all pens", tools=[stock], output=Order)
    assert response.output == Order(item="pen", quantity=3)
    first = mock_backend.calls[0]
    assert first["tool_choice"] is None
    assert "calling the tool 'Order'" in first["messages"][0]["content"]


# -- transactional ToolContext --------------------------------------------------------------


def transfer(ctx: ToolContext, amount: int) -> str:
    """Move money from checking to savings; fails when checking would go negative."""
    ctx.state["log"].append(f"transfer {amount}")
    ctx.state["accounts"]["checking"] -= amount
    ctx.state["accounts"]["savings"] += amount
    if ctx.state["accounts"]["checking"] < 0:
        raise ValueError("insufficient funds")
    return "ok"


def test_a_failed_tool_leaves_no_trace_in_the_state(client: llmplex.Client, mock_backend: MockBackend) -> None:
    context = ToolContext(state={"accounts": {"checking": 100, "savings": 0}, "log": []}, resources={"db": object()})
    state = context.state
    mock_backend.push(tool_calls=[call("transfer", {"amount": 60}, "1"), call("transfer", {"amount": 60}, "2")])
    mock_backend.push("done")
    client.complete("mock:m", "move 60 twice", tools=[transfer], tool_context=context)
    assert context.state is state
    assert state == {"accounts": {"checking": 40, "savings": 60}, "log": ["transfer 60"]}
    results = [m["content"] for m in tool_messages(mock_backend)]
    assert results == ["ok", "Error: tool 'transfer' failed: ValueError: insufficient funds"]


async def test_async_context_handlers_run_one_at_a_time(client: llmplex.Client, mock_backend: MockBackend) -> None:
    async def bump(ctx: ToolContext, fail: bool) -> int:
        """Increment a counter across an await; may fail afterwards."""
        value = ctx.state["n"]
        await asyncio.sleep(0.01)
        ctx.state["n"] = value + 1
        if fail:
            raise RuntimeError("rolled back")
        return int(ctx.state["n"])

    context = ToolContext(state={"n": 0})
    mock_backend.push(
        tool_calls=[
            call("bump", {"fail": False}, "1"),
            call("bump", {"fail": True}, "2"),
            call("bump", {"fail": False}, "3"),
        ]
    )
    mock_backend.push("done")
    await client.acomplete("mock:m", "bump", tools=[bump], tool_context=context)
    assert context.state == {"n": 2}
    assert [m["content"] for m in tool_messages(mock_backend)] == [
        "1",
        "Error: tool 'bump' failed: RuntimeError: rolled back",
        "2",
    ]


def test_transaction_can_be_used_directly() -> None:
    context = ToolContext(state={"items": [1]})

    def append_then_fail() -> None:
        with context.transaction():
            context.state["items"].append(2)
            raise KeyError("x")

    with pytest.raises(KeyError):
        append_then_fail()
    assert context.state == {"items": [1]}
