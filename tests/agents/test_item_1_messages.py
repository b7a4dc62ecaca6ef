"""Issue 32 item 1: the Messages API as today's clients send it, through the anthropic SDK and a real gateway."""

from __future__ import annotations

import json
import typing
from typing import Any

import anthropic
import pytest
from anthropic.types import OutputConfigParam, ThinkingConfigParam

from tests.agents.conftest import agents_config, claude
from tests.gateway.fake_anthropic import FakeAnthropic
from tests.gateway.harness import Gateway, running_gateway
from tests.plugins.anthropic.wire import MODEL, message, text_block
from tests.support.fault_server import FaultServer

MID = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "hello"},
    {"role": "system", "content": [{"type": "text", "text": "Reminder: be brief."}]},
    {"role": "user", "content": "again"},
]
EFFORTS = typing.get_args(typing.get_args(typing.get_type_hints(OutputConfigParam)["effort"])[0])
THINKING_TYPES = [typing.get_args(typing.get_type_hints(t)["type"])[0] for t in typing.get_args(ThinkingConfigParam)]


def test_item_1_a_system_message_mid_conversation_stays_where_it_is_on_a_chat_wire(gateway: Gateway) -> None:
    raw = claude(gateway).messages.with_raw_response.create(model="mock:echo", max_tokens=50, messages=MID)  # type: ignore[arg-type]
    assert raw.http_response.status_code == 200
    sent = gateway.mock.calls[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "system", "user"]
    assert sent[2]["content"] == "Reminder: be brief."


def test_item_1_a_mid_conversation_system_message_is_folded_and_marked_for_anthropic(
    gateway: Gateway, upstream: FakeAnthropic
) -> None:
    upstream.reply(message([text_block("ok")]))
    claude(gateway).messages.create(model=f"anthropic:{MODEL}", max_tokens=50, system="Top.", messages=MID)  # type: ignore[arg-type]
    sent = upstream.bodies[-1]
    assert sent["system"] == "Top."  # the leading system prompt stays the system prompt
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "user"]
    texts = [block["text"] for block in sent["messages"][2]["content"]]
    assert texts == ["<system>\nReminder: be brief.\n</system>", "again"]


def test_item_1_a_trailing_system_message_becomes_a_marked_user_turn(gateway: Gateway, upstream: FakeAnthropic) -> None:
    upstream.reply(message([text_block("ok")]))
    turns = [*MID[:2], MID[2]]
    claude(gateway).messages.create(model=f"anthropic:{MODEL}", max_tokens=50, messages=turns)  # type: ignore[arg-type]
    last = upstream.bodies[-1]["messages"][-1]
    assert last["role"] == "user" and "Reminder: be brief." in json.dumps(last["content"])


def test_item_1_the_sdk_knows_the_efforts_and_thinking_types_tested_here() -> None:
    assert set(EFFORTS) == {"low", "medium", "high", "xhigh", "max"}
    assert set(THINKING_TYPES) == {"enabled", "disabled", "adaptive", "between_tools"}


@pytest.mark.parametrize("effort", EFFORTS)
def test_item_1_every_effort_of_the_sdk_reaches_each_provider(
    gateway: Gateway, upstream: FakeAnthropic, fault_server: FaultServer, effort: str
) -> None:
    client = claude(gateway)
    asked: Any = {"thinking": {"type": "adaptive"}, "output_config": {"effort": effort}}
    client.messages.create(model="mock:echo", max_tokens=50, messages=MID[:1], **asked)
    assert gateway.mock.calls[-1]["options"]["reasoning_effort"] == effort
    upstream.reply(message([text_block("ok")]))
    client.messages.create(model=f"anthropic:{MODEL}", max_tokens=50, messages=MID[:1], **asked)
    assert upstream.bodies[-1]["output_config"] == {"effort": effort}
    client.messages.create(model="faulty:o4-mini", max_tokens=50, messages=MID[:1], **asked)
    assert fault_server.requests[-1].body["reasoning_effort"] == effort


@pytest.mark.parametrize("kind", THINKING_TYPES)
def test_item_1_every_thinking_type_is_mapped(gateway: Gateway, kind: str) -> None:
    thinking: Any = {"type": kind, **({"budget_tokens": 2048} if kind == "enabled" else {})}
    claude(gateway).messages.create(model="mock:echo", max_tokens=4096, messages=MID[:1], thinking=thinking)
    effort = gateway.mock.calls[-1]["options"].get("reasoning_effort")
    assert effort == {"enabled": "low", "disabled": None, "adaptive": "high", "between_tools": "high"}[kind]


def test_item_1_a_budget_model_gets_a_budget_for_xhigh_and_max(gateway: Gateway, upstream: FakeAnthropic) -> None:
    client = claude(gateway)
    for effort, budget in (("xhigh", 24576), ("max", 31999)):
        upstream.reply(message([text_block("ok")]))
        client.messages.create(
            model="anthropic:claude-sonnet-4-5",
            max_tokens=40000,
            messages=MID[:1],
            output_config={"effort": effort},
            timeout=30,  # the SDK wants one for a long answer
        )
        assert upstream.bodies[-1]["thinking"] == {"type": "enabled", "budget_tokens": budget}


def test_item_1_beta_query_and_headers_are_never_an_error(gateway: Gateway) -> None:
    raw = claude(gateway).beta.messages.with_raw_response.create(
        model="mock:echo",
        max_tokens=50,
        messages=MID[:1],
        betas=["mid-conversation-system-2026-04-07", "interleaved-thinking-2025-05-14", "context-1m-2025-08-07"],
        extra_query={"beta": "true"},  # as Claude Code sends it
    )
    assert raw.http_response.status_code == 200 and "beta=true" in str(raw.http_response.request.url)
    dropped = raw.headers["x-llmplex-dropped"]
    assert "anthropic-beta context-1m-2025-08-07" in dropped
    assert "interleaved" not in dropped and "mid-conversation" not in dropped


def test_item_1_fields_the_real_api_accepts_are_dropped_by_name_never_refused(gateway: Gateway) -> None:
    extra: Any = {
        "metadata": {"user_id": "u-1"},
        "service_tier": "auto",
        "container": "container_1",
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
        "speed": "fast",
        "inference_geo": "us",
    }
    raw = claude(gateway).messages.with_raw_response.create(
        model="mock:echo", max_tokens=50, messages=MID[:1], extra_body=extra
    )
    assert raw.http_response.status_code == 200
    assert set(raw.headers["x-llmplex-dropped"].split("; ")) == set(extra)


def test_item_1_dropped_fields_are_named_on_streams_too(gateway: Gateway) -> None:
    with claude(gateway).messages.with_streaming_response.create(
        model="mock:echo", max_tokens=50, messages=MID[:1], stream=True, metadata={"user_id": "u"}
    ) as streamed:
        assert streamed.headers["x-llmplex-dropped"] == "metadata"
        assert "message_stop" in "".join(streamed.iter_text())


def test_item_1_what_would_change_the_answer_is_a_400_naming_it_unless_dropped(
    fault_server: FaultServer, upstream: FakeAnthropic
) -> None:
    servers: Any = {"mcp_servers": [{"type": "url", "url": "https://mcp.example", "name": "x"}]}
    search: Any = [{"type": "web_search_20250305", "name": "web_search"}]
    with running_gateway(agents_config(fault_server, upstream)) as gateway:
        with pytest.raises(anthropic.BadRequestError, match="mcp_servers") as refused:
            claude(gateway).messages.create(model="mock:echo", max_tokens=50, messages=MID[:1], extra_body=servers)
        assert "drop_unsupported" in str(refused.value) and gateway.mock.calls == []
        with pytest.raises(anthropic.BadRequestError, match="server tool"):
            claude(gateway).messages.create(model="mock:echo", max_tokens=50, messages=MID[:1], tools=search)
    with running_gateway(agents_config(fault_server, upstream, drop_unsupported=True)) as gateway:
        raw = claude(gateway).messages.with_raw_response.create(
            model="mock:echo", max_tokens=50, messages=MID[:1], tools=search, extra_body=servers
        )
        assert "mcp_servers" in raw.headers["x-llmplex-dropped"] and "tools.0" in raw.headers["x-llmplex-dropped"]


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"messages": [{"role": "robot", "content": "hi"}]}, "role"),
        ({"output_config": {"effort": "extreme"}}, "output_config.effort"),
        ({"thinking": {"type": "sometimes"}}, "thinking"),
        ({"messages": [{"role": "system", "content": 7}]}, "messages.0"),
    ],
)
def test_item_1_hostile_values_are_400s_naming_the_field(gateway: Gateway, body: dict[str, Any], needle: str) -> None:
    request = {"model": "mock:echo", "max_tokens": 50, "messages": MID[:1], **body}
    answer = claude(gateway).messages.with_raw_response.create  # the SDK's types would refuse these before sending
    with pytest.raises(anthropic.BadRequestError, match=needle.replace(".", r"\.")):
        answer(**request)
    assert gateway.mock.calls == []


def test_item_1_a_system_turn_s_tool_blocks_are_refused_by_name(gateway: Gateway) -> None:
    blocks = [{"type": "tool_addition", "tool": {"name": "x"}}, {"type": "text", "text": "t"}]
    turn = {"role": "system", "content": blocks}
    with pytest.raises(anthropic.BadRequestError, match=r"tool_addition blocks of messages\.1"):
        claude(gateway).messages.create(model="mock:echo", max_tokens=50, messages=[MID[0], turn])  # type: ignore[list-item]
