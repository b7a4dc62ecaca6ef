"""Issue 32 item 3: what Codex CLI sends on the Responses API, through a real gateway to any provider.

``fixtures/codex_0171_first_turn.json`` is the first request of ``codex exec "Say hello"`` (codex-cli 0.171.0, a
custom model provider with ``wire_api = "responses"``), recorded by a local server; its long texts are cut.
``fixtures/codex_0171_default_model_first_turn.json`` is the same with no model set (Codex then asks for its default,
``gpt-6.2-sol``, and declares its tools in an ``additional_tools`` input item); ids zeroed, long texts cut.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.agents.conftest import oai
from tests.gateway.harness import MASTER_KEY, Gateway
from tests.support.fault_server import FaultServer
from tests.support.faults import Fault

FIXTURES = Path(__file__).parent / "fixtures"
CODEX = json.loads((FIXTURES / "codex_0171_first_turn.json").read_text())["body"]
CODEX_DEFAULT_MODEL = json.loads((FIXTURES / "codex_0171_default_model_first_turn.json").read_text())["body"]
"""The same first turn with no model set: Codex's default model gets its tools in an ``additional_tools`` item."""
PATCH = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"
APPLY_PATCH: Any = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Use the `apply_patch` tool to edit files.",
    "format": {"type": "grammar", "syntax": "lark", "definition": 'start: "*** Begin Patch" LF'},
}


def _post(gateway: Gateway, body: dict[str, Any]) -> httpx.Response:
    headers = {"authorization": f"Bearer {MASTER_KEY}", "accept": "text/event-stream"}
    return httpx.post(gateway.url + "/v1/responses", json=body, headers=headers, timeout=60)


def _events(answer: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")]


def test_item_3_codexs_first_turn_goes_through_with_its_namespace_and_web_search_tools(gateway: Gateway) -> None:
    answer = _post(gateway, {**CODEX, "model": "mock:echo"})
    assert answer.status_code == 200, answer.text
    dropped = answer.headers["x-llmplex-dropped"].split("; ")
    assert "tools.8 (web_search: run only by OpenAI's Responses API)" in dropped and "client_metadata" in dropped
    assert not any("store" in name or "include" in name for name in dropped)  # carried or refused, never dropped
    sent = gateway.mock.calls[-1]
    names = [tool["name"] for tool in sent["tools"]]
    assert "exec_command" in names and "close_agent" in names and "multi_agent_v1" not in names
    assert [m["role"] for m in sent["messages"]][:2] == ["system", "system"]  # its developer messages


def _codex_to(gateway: Gateway, fault_server: FaultServer, model: str) -> tuple[httpx.Response, dict[str, Any]]:
    """Codex's first turn sent to ``model`` on the fault server: the gateway's answer, and the body it sent on."""
    fault_server.enqueue(Fault.ok(text="hello"))
    answer = _post(gateway, {**CODEX, "model": model})
    assert answer.status_code == 200, answer.text
    return answer, fault_server.requests[-1].body


def test_item_3_web_search_goes_to_openais_responses_api_which_runs_it(
    gateway: Gateway, fault_server: FaultServer
) -> None:
    answer, body = _codex_to(gateway, fault_server, "faultyresp:gpt-5.1-codex")
    assert "web_search" not in answer.headers.get("x-llmplex-dropped", "")
    sent = body["tools"]
    assert sent[-1] == CODEX["tools"][8] and [t["type"] for t in sent].count("web_search") == 1  # as Codex sent it
    assert {"exec_command", "close_agent"} <= {t.get("name") for t in sent}  # beside the function tools
    on_chat, body = _codex_to(gateway, fault_server, "faulty:gpt-4o-mini")
    assert "tools.8 (web_search: run only by OpenAI's Responses API)" in on_chat.headers["x-llmplex-dropped"]
    assert all(t.get("type") == "function" for t in body["tools"])


def test_item_3_codexs_stream_has_every_event_it_waits_for_in_order(gateway: Gateway) -> None:
    events = [e["type"] for e in _events(_post(gateway, {**CODEX, "model": "mock:echo"}))]
    assert events[:2] == ["response.created", "response.in_progress"]
    assert events[-1] == "response.completed"
    first_delta = events.index("response.output_text.delta")
    assert events[first_delta - 2 : first_delta] == ["response.output_item.added", "response.content_part.added"]
    assert events[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    numbers = [e["sequence_number"] for e in _events(_post(gateway, {**CODEX, "model": "mock:echo"}))]
    assert numbers == list(range(len(numbers)))


def test_item_3_store_false_and_the_reasoning_include_are_carried_to_openai(
    gateway: Gateway, fault_server: FaultServer
) -> None:
    answer, sent = _codex_to(gateway, fault_server, "faultyresp:gpt-5.1-codex")
    assert (sent["store"], sent["include"]) == (False, ["reasoning.encrypted_content"])
    assert (sent["prompt_cache_key"], sent["parallel_tool_calls"]) == (CODEX["prompt_cache_key"], True)
    assert "prompt_cache_key" not in answer.headers.get("x-llmplex-dropped", "")


@pytest.mark.parametrize(
    ("privacy", "needle"),
    [({"store": True}, "store: true"), ({"include": ["message.output_text.logprobs"]}, "include")],
)
def test_item_3_a_privacy_ask_another_provider_cannot_honour_is_refused(
    gateway: Gateway, privacy: dict[str, Any], needle: str
) -> None:
    with pytest.raises(openai.BadRequestError, match=needle):
        oai(gateway).responses.create(model="mock:echo", input="hi", **privacy)
    assert gateway.mock.calls == []


def test_item_3_store_false_with_the_reasoning_include_is_honoured_anywhere(gateway: Gateway) -> None:
    answer = oai(gateway).responses.create(
        model="mock:echo", input="hi", store=False, include=["reasoning.encrypted_content"]
    )
    assert answer.status == "completed"


def test_item_3_a_custom_tool_becomes_a_function_with_one_string_and_comes_back_custom(gateway: Gateway) -> None:
    arguments = json.dumps({"input": PATCH})
    gateway.mock.push("", tool_calls=[{"id": "call_1", "name": "apply_patch", "arguments": arguments}])
    answer = oai(gateway).responses.create(model="mock:echo", input="add a.txt", tools=[APPLY_PATCH])
    item = answer.output[0]
    assert item.type == "custom_tool_call" and (item.name, item.input, item.call_id) == ("apply_patch", PATCH, "call_1")
    declared = gateway.mock.calls[-1]["tools"][0]
    assert (
        declared["parameters"]["required"] == ["input"]
        and "lark" in declared["parameters"]["properties"]["input"]["description"]
    )
    gateway.mock.push("", tool_calls=[{"id": "call_2", "name": "apply_patch", "arguments": arguments}])
    events = _events(_post(gateway, {"model": "mock:echo", "input": "again", "tools": [APPLY_PATCH], "stream": True}))
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert done == [
        {
            "type": "custom_tool_call",
            "id": "ctc_call_2",
            "call_id": "call_2",
            "name": "apply_patch",
            "input": PATCH,
            "status": "completed",
        }
    ]
    assert "response.function_call_arguments.delta" not in {e["type"] for e in events}


def test_item_3_a_custom_tool_call_and_its_output_replay_as_a_tool_turn(gateway: Gateway) -> None:
    history: Any = [
        {"type": "message", "role": "user", "content": "add a.txt"},
        {"type": "custom_tool_call", "call_id": "call_1", "name": "apply_patch", "input": PATCH},
        {"type": "custom_tool_call_output", "call_id": "call_1", "output": "Done!"},
    ]
    oai(gateway).responses.create(model="mock:echo", input=history, tools=[APPLY_PATCH])
    sent = gateway.mock.calls[-1]["messages"]
    assert sent[1]["tool_calls"][0] == {
        "id": "call_1",
        "name": "apply_patch",
        "arguments": json.dumps({"input": PATCH}),
    }
    assert (sent[2]["role"], sent[2]["content"]) == ("tool", "Done!")


def test_item_3_a_namespaced_call_names_its_namespace(gateway: Gateway) -> None:
    gateway.mock.push("", tool_calls=[{"id": "c1", "name": "close_agent", "arguments": '{"target": "a1"}'}])
    answer = _post(gateway, {**CODEX, "model": "mock:echo", "stream": False})
    item = answer.json()["output"][0]
    assert (item["type"], item["name"], item["namespace"]) == ("function_call", "close_agent", "multi_agent_v1")


@pytest.mark.parametrize(
    ("tools", "needle"),
    [
        ([{"type": "namespace", "name": "ns", "tools": [{"type": "web_search"}]}], "function or custom"),
        (
            [
                {"type": "function", "name": "a"},
                {"type": "namespace", "name": "n", "tools": [{"type": "function", "name": "a"}]},
            ],
            "more than once",
        ),
        ([{"type": "code_interpreter", "container": {"type": "auto"}}], "code_interpreter"),
        ([{"type": "custom", "name": ""}], "tools.0.name"),
        (["not a tool"], "tools.0"),
    ],
)
def test_item_3_hostile_tools_are_400s_naming_them(gateway: Gateway, tools: list[Any], needle: str) -> None:
    answer = _post(gateway, {"model": "mock:echo", "input": "hi", "tools": tools})
    assert answer.status_code == 400 and needle in answer.json()["error"]["message"]
    assert gateway.mock.calls == []


def test_item_3_codexs_default_model_declares_its_tools_in_an_additional_tools_item(gateway: Gateway) -> None:
    assert CODEX_DEFAULT_MODEL["input"][0]["type"] == "additional_tools" and "tools" not in CODEX_DEFAULT_MODEL
    answer = _post(gateway, {**CODEX_DEFAULT_MODEL, "model": "mock:echo"})
    assert answer.status_code == 200, answer.text
    sent = gateway.mock.calls[-1]
    names = [tool["name"] for tool in sent["tools"]]
    assert "exec" in names and len(names) == len(set(names)) > 3  # the namespaces' tools, flattened
    assert [m["role"] for m in sent["messages"]][:4] == ["system"] * 4  # the item itself is no message
    gateway.mock.push("", tool_calls=[{"id": "c1", "name": "exec", "arguments": json.dumps({"input": "1 + 1"})}])
    item = _post(gateway, {**CODEX_DEFAULT_MODEL, "model": "mock:echo", "stream": False}).json()["output"][0]
    assert (item["type"], item["name"], item["input"], item["namespace"]) == (
        "custom_tool_call",
        "exec",
        "1 + 1",
        "functions",
    )


@pytest.mark.parametrize(
    ("item", "needle"),
    [
        ({"type": "additional_tools", "role": "developer"}, "input.0.tools must be a list"),
        ({"type": "additional_tools", "tools": [{"type": "function", "name": ""}]}, "input.0.tools.0.name"),
        ({"type": "additional_tools", "tools": [{"type": "file_search"}]}, "input.0.tools.0 (file_search"),
    ],
)
def test_item_3_a_hostile_additional_tools_item_is_a_400_naming_it(
    gateway: Gateway, item: dict[str, Any], needle: str
) -> None:
    answer = _post(gateway, {"model": "mock:echo", "input": [item, {"role": "user", "content": "hi"}]})
    assert answer.status_code == 400 and needle in answer.json()["error"]["message"], answer.text
    assert gateway.mock.calls == []


def test_item_3_tools_declared_twice_across_tools_and_an_additional_tools_item_are_refused(gateway: Gateway) -> None:
    tool = {"type": "function", "name": "read"}
    said = [{"type": "additional_tools", "tools": [tool]}, {"role": "user", "content": "hi"}]
    body = {"model": "mock:echo", "tools": [tool], "input": said}
    answer = _post(gateway, body)
    assert answer.status_code == 400 and "read more than once" in answer.json()["error"]["message"]
