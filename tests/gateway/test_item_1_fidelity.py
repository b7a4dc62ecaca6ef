"""Issue 22 item 1: what coding agents send on ``POST /v1/messages`` reaches the provider, nothing silently lost.

The official anthropic SDK talks to a real gateway in front of a local fake
Anthropic server (a real HTTP server on 127.0.0.1 that records each request
body and answers from a queue), reached through the anthropic plugin. The
tests read what the upstream received: the ``cache_control`` marks where the
client put them, the thinking blocks with their exact signatures, the images
of tool results; and what a provider that cannot honour them does (a 400 in
the API's error shape, or with ``drop_unsupported`` the call without them).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from tests.gateway.fake_anthropic import FakeAnthropic
from tests.gateway.harness import MASTER_KEY, PROVIDER_KEY, Gateway, gateway_config, running_gateway
from tests.plugins.anthropic.wire import MODEL, message, stream_body, text_block, tool_use_block, usage
from tests.support.fault_server import FaultServer

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()
EPHEMERAL = {"type": "ephemeral"}
SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds/signed+thinking=="
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"


@pytest.fixture
def upstream() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


def _config(upstream: FakeAnthropic, **extra: Any) -> dict[str, Any]:
    provider = {"plugin": "anthropic", "base_url": upstream.url, "api_key": PROVIDER_KEY}
    providers = {"anthropic": provider, **extra.pop("providers", {})}
    return gateway_config(None, providers=providers, **extra)


@pytest.fixture
def gateway(upstream: FakeAnthropic) -> Iterator[Gateway]:
    with running_gateway(_config(upstream, timeout=5)) as running:
        yield running


def _client(gateway: Gateway) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=gateway.url, api_key=MASTER_KEY, max_retries=0)


THINKING = {"type": "thinking", "thinking": "The user wants a.py read; call read.", "signature": SIGNATURE}
REDACTED_BLOCK = {"type": "redacted_thinking", "data": REDACTED}


def _agent_request(model: str) -> dict[str, Any]:
    """A second turn as Claude Code sends it: marked system blocks and tool, thinking, a tool result with an image."""
    return {
        "model": model,
        "max_tokens": 8000,
        "thinking": {"type": "enabled", "budget_tokens": 4096},
        "system": [
            {"type": "text", "text": "You are Claude Code.", "cache_control": EPHEMERAL},
            {"type": "text", "text": "Project rules: be brief."},
            {"type": "text", "text": "Environment: linux.", "cache_control": EPHEMERAL},
        ],
        "tools": [{"name": "read", "input_schema": {"type": "object"}, "cache_control": EPHEMERAL}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Read a.py"}]},
            {
                "role": "assistant",
                "content": [
                    THINKING,
                    REDACTED_BLOCK,
                    {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.py"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [
                            {"type": "text", "text": "a screenshot of a.py"},
                            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                        ],
                    },
                    {"type": "text", "text": "What is in it?", "cache_control": EPHEMERAL},
                ],
            },
        ],
    }


def _marked(value: Any) -> list[Any]:
    """Every dict carrying ``cache_control`` in ``value``, depth first."""
    found: list[Any] = []
    if isinstance(value, dict):
        if "cache_control" in value:
            found.append(value)
        for item in value.values():
            found += _marked(item)
    elif isinstance(value, list):
        for item in value:
            found += _marked(item)
    return found


def test_item_1_cache_marks_thinking_signatures_and_tool_images_reach_anthropic(
    gateway: Gateway, upstream: FakeAnthropic
) -> None:
    upstream.reply(message([text_block("a.py prints 1")], message_usage=usage(10, 4, cache_read=3000)))
    answer = _client(gateway).messages.create(**_agent_request("anthropic:claude-sonnet-4-5"))  # type: ignore[arg-type]
    assert answer.content[0].type == "text" and answer.usage.cache_read_input_tokens == 3000
    sent = upstream.bodies[-1]
    assert sent["system"] == [
        {"type": "text", "text": "You are Claude Code.", "cache_control": EPHEMERAL},
        {"type": "text", "text": "Project rules: be brief."},
        {"type": "text", "text": "Environment: linux.", "cache_control": EPHEMERAL},
    ]
    assert sent["tools"][0]["cache_control"] == EPHEMERAL
    assistant = sent["messages"][1]["content"]
    assert assistant[:2] == [THINKING, REDACTED_BLOCK]  # the exact blocks, signatures unchanged
    assert assistant[2]["type"] == "tool_use"
    last = sent["messages"][2]["content"]
    assert last[0]["type"] == "tool_result" and "a screenshot of a.py" in json.dumps(last[0]["content"])
    images = [block for block in last if block["type"] == "image"]
    assert [image["source"]["data"] for image in images] == [PNG]  # the tool's image, not "[image]"
    assert last[-1] == {"type": "text", "text": "What is in it?", "cache_control": EPHEMERAL}
    assert len(_marked(sent)) == 4  # the client's four breakpoints, no more, no fewer
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 4096}  # the budget asked for (4,096: medium)


def test_item_1_a_mark_inside_a_user_turn_stays_on_its_block(gateway: Gateway, upstream: FakeAnthropic) -> None:
    upstream.reply(message([text_block("ok")]))
    _client(gateway).messages.create(
        model=f"anthropic:{MODEL}",
        max_tokens=100,
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "long document", "cache_control": EPHEMERAL},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                    {"type": "text", "text": "question"},
                ],
            }
        ],
    )
    sent = upstream.bodies[-1]["messages"]
    assert len(sent) == 1  # still one user turn
    assert [block.get("cache_control") for block in sent[0]["content"]] == [EPHEMERAL, None, None]


def test_item_1_thinking_blocks_come_back_whole_and_streamed(gateway: Gateway, upstream: FakeAnthropic) -> None:
    upstream.reply(
        message([THINKING, REDACTED_BLOCK, tool_use_block("read", {"path": "a.py"})], stop_reason="tool_use")
    )
    client = _client(gateway)
    request = {
        "model": f"anthropic:{MODEL}",
        "max_tokens": 2000,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [{"role": "user", "content": "Read a.py"}],
    }
    whole = client.messages.create(**request)  # type: ignore[arg-type]
    blocks = [block.model_dump(exclude_none=True) for block in whole.content]
    assert blocks[:2] == [THINKING, REDACTED_BLOCK] and blocks[2]["type"] == "tool_use"
    upstream.reply_stream(
        stream_body([{"thinking": ["The user wants ", "a.py."], "signature": SIGNATURE}, {"text": ["Reading."]}])
    )
    with client.messages.stream(**request) as stream:  # type: ignore[arg-type]
        events = [event.type for event in stream]
        final = stream.get_final_message()
    assert "thinking" in events and "signature" in events
    assert final.content[0].model_dump() == {
        "type": "thinking",
        "thinking": "The user wants a.py.",
        "signature": SIGNATURE,
    }
    assert final.content[1].type == "text"
    # the streamed thinking, sent back on the next turn, reaches the provider byte for byte
    upstream.reply(message([text_block("done")]))
    follow = [*request["messages"], {"role": "assistant", "content": [b.model_dump() for b in final.content]}]  # type: ignore[list-item]
    client.messages.create(**{**request, "messages": [*follow, {"role": "user", "content": "go on"}]})  # type: ignore[arg-type]
    assert upstream.bodies[-1]["messages"][1]["content"][0] == final.content[0].model_dump()


def test_item_1_thinking_to_a_provider_without_it_is_a_400_or_dropped(upstream: FakeAnthropic) -> None:
    request = _agent_request("mock:echo")
    strict = {"drop_hints": False}  # by default the gateway drops cache marks itself (tests/agents, item 2)
    with running_gateway(_config(upstream, gateway=strict)) as gateway:
        with pytest.raises(anthropic.BadRequestError) as refused:
            _client(gateway).messages.create(**request)  # type: ignore[arg-type]
        assert refused.value.status_code == 400
        body = refused.value.body
        assert isinstance(body, dict) and body["type"] == "error"
        assert body["error"]["type"] == "invalid_request_error"
        assert "cache=True" in body["error"]["message"] and "Nothing was sent" in body["error"]["message"]
        assert gateway.mock.calls == []
    dropping = _config(upstream, drop_unsupported=True, gateway=strict)
    with running_gateway(dropping) as gateway:
        raw = _client(gateway).messages.with_raw_response.create(**request)  # type: ignore[arg-type]
        assert raw.parse().content[0].type == "text"
        dropped = raw.headers["x-llmplex-dropped"]
        assert "reasoning of messages[" in dropped and "(anthropic)" in dropped and "cache=True on" in dropped
        sent = gateway.mock.calls[-1]
        assert all(not m.get("reasoning") and not m.get("cache") for m in sent["messages"])
    assert upstream.bodies == []  # nothing reached Anthropic


def test_item_1_a_forged_llmplex_signature_and_an_unknown_ttl_are_400s(gateway: Gateway) -> None:
    client = _client(gateway)
    forged = {"type": "thinking", "thinking": "x", "signature": "llmplex-reasoning.not-base64!"}
    turns = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [forged, {"type": "text", "text": "hello"}]},
        {"role": "user", "content": "again"},
    ]
    with pytest.raises(anthropic.BadRequestError, match="not reasoning this gateway wrote"):
        client.messages.create(model="mock:echo", max_tokens=10, messages=turns)  # type: ignore[arg-type]
    marked = [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    with pytest.raises(anthropic.BadRequestError, match="ttl"):
        client.messages.create(model="mock:echo", max_tokens=10, messages=[{"role": "user", "content": marked}])  # type: ignore[typeddict-item]
    assert gateway.mock.calls == []


def test_item_1_another_providers_reasoning_round_trips_through_a_thinking_block() -> None:
    from llmplex.gateway.apis.anthropic_messages import MessagesRequest, messages_call, thinking_block
    from llmplex.types import ReasoningPart

    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB-opaque"}
    part = ReasoningPart(format="openai-responses", text="plan: read", data=item)
    block = thinking_block(part)
    assert block["type"] == "thinking" and block["thinking"] == "plan: read"
    assert block["signature"].startswith("llmplex-reasoning.")
    body = {
        "model": "openai:gpt-5",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [block, {"type": "text", "text": "hello"}]},
            {"role": "user", "content": "again"},
        ],
    }
    spec = messages_call(MessagesRequest.model_validate_json(json.dumps(body)))
    assert spec.messages[1].reasoning == (part,)  # the same part, data byte for byte


def test_item_1_responses_reasoning_items_go_both_ways(upstream: FakeAnthropic) -> None:
    with FaultServer() as fault_server, running_gateway(_config(upstream, **_with_faulty(fault_server))) as gateway:
        client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=MASTER_KEY, max_retries=0)
        item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB-opaque-state"}
        call = {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": '{"path": "a.py"}'}
        output = {"type": "function_call_output", "call_id": "call_1", "output": "print(1)"}
        client.responses.create(
            model="faultyresp:gpt-5", input=[{"role": "user", "content": "Read a.py"}, item, call, output]
        )  # type: ignore[list-item]
        sent = fault_server.requests[-1].body["input"]
        assert [entry.get("type") for entry in sent][1:3] == ["reasoning", "function_call"]
        assert sent[1] == item  # OpenAI's own reasoning item, unchanged
        # an OpenAI client reaching Anthropic: the thinking comes back as a reasoning item that carries it
        upstream.reply(message([THINKING, tool_use_block("read", {"path": "a.py"}, "toolu_1")], stop_reason="tool_use"))
        answer = client.responses.create(model=f"anthropic:{MODEL}", input="Read a.py")
        reasoning = answer.output[0]
        assert reasoning.type == "reasoning" and reasoning.summary[0].text == THINKING["thinking"]
        assert (reasoning.encrypted_content or "").startswith("llmplex-reasoning.")
        upstream.reply(message([text_block("done")]))
        items = [entry.model_dump(exclude_none=True) for entry in answer.output]
        client.responses.create(
            model=f"anthropic:{MODEL}",
            input=[{"role": "user", "content": "Read a.py"}, *items, {**output, "call_id": "toolu_1"}],  # type: ignore[list-item]
        )
        assert upstream.bodies[-1]["messages"][1]["content"][0] == THINKING  # the signature, byte for byte


def _with_faulty(fault_server: FaultServer) -> dict[str, Any]:
    return {"providers": gateway_config(fault_server)["providers"]}


def test_item_1_streamed_reasoning_reaches_responses_and_messages_clients(
    gateway: Gateway, upstream: FakeAnthropic
) -> None:
    thinking = {"thinking": ["Plan: ", "read a.py."], "signature": SIGNATURE}
    upstream.reply_stream(stream_body([thinking, {"text": ["Reading."]}]))
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=MASTER_KEY, max_retries=0)
    with client.responses.stream(model=f"anthropic:{MODEL}", input="Read a.py") as stream:
        done = [event.item for event in stream if event.type == "response.output_item.done"]
        final = stream.get_final_response()
    assert done[0].type == "reasoning" and done[0].summary[0].text == "Plan: read a.py."
    assert [item.type for item in final.output] == ["reasoning", "message"]
    # a redacted block streams to an Anthropic client as one whole block
    from llmplex.gateway.apis.anthropic_messages import MessagesStreamEncoder
    from llmplex.types import ReasoningPart, StreamEvent

    encoder = MessagesStreamEncoder("anthropic:x")
    part = ReasoningPart(format="anthropic", data=REDACTED_BLOCK)
    raw = encoder.encode(StreamEvent(type="reasoning", reasoning=part)).decode()
    starts = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: ")]
    assert starts[1] == {"type": "content_block_start", "index": 0, "content_block": REDACTED_BLOCK}
    assert starts[2] == {"type": "content_block_stop", "index": 0}


def test_item_1_a_mark_inside_a_tool_result_reaches_anthropic(gateway: Gateway, upstream: FakeAnthropic) -> None:
    upstream.reply(message([text_block("ok")]))
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "print(1)", "cache_control": EPHEMERAL}],
    }
    turns = [
        {"role": "user", "content": "Read a.py"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}]},
        {"role": "user", "content": [result]},
    ]
    _client(gateway).messages.create(model=f"anthropic:{MODEL}", max_tokens=100, messages=turns)  # type: ignore[arg-type]
    sent = upstream.bodies[-1]["messages"][2]["content"]
    assert sent[0]["type"] == "tool_result" and sent[0]["cache_control"] == EPHEMERAL
    middle = {**result, "content": [result["content"][0], {"type": "text", "text": "more"}]}  # type: ignore[index]
    with pytest.raises(anthropic.BadRequestError, match="inside a tool_result"):
        _client(gateway).messages.create(
            model=f"anthropic:{MODEL}",
            max_tokens=100,
            messages=[*turns[:2], {"role": "user", "content": [middle]}],  # type: ignore[list-item]
        )
    assert len(upstream.bodies) == 1


@pytest.mark.parametrize("budget", [-1, 0, 1023, 100_000, 2**63])
def test_item_1_a_thinking_budget_out_of_range_is_a_400(gateway: Gateway, budget: int) -> None:
    with pytest.raises(anthropic.BadRequestError) as bad:
        _client(gateway).messages.create(
            model="mock:echo",
            max_tokens=20_000,  # the SDK wants a stream above about 21,000
            thinking={"type": "enabled", "budget_tokens": budget},
            messages=[{"role": "user", "content": "hi"}],
        )
    assert bad.value.status_code == 400 and "budget_tokens" in str(bad.value)
    assert gateway.mock.calls == []


def test_item_1_images_in_responses_tool_outputs_reach_the_provider(gateway: Gateway, upstream: FakeAnthropic) -> None:
    upstream.reply(message([text_block("a cat")]))
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=MASTER_KEY, max_retries=0)
    call = {"type": "function_call", "call_id": "toolu_1", "name": "shot", "arguments": "{}"}
    output = [
        {"type": "input_text", "text": "the screen"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
    ]
    client.responses.create(
        model=f"anthropic:{MODEL}",
        input=[
            {"role": "user", "content": "What is on screen?"},
            call,
            {"type": "function_call_output", "call_id": "toolu_1", "output": output},
        ],  # type: ignore[list-item]
    )
    last = upstream.bodies[-1]["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and "the screen" in json.dumps(last[0]["content"])
    assert [block["source"]["data"] for block in last if block["type"] == "image"] == [PNG]


def test_item_1_openai_clients_reasoning_effort_reaches_the_provider(upstream: FakeAnthropic) -> None:
    with FaultServer() as fault_server, running_gateway(_config(upstream, **_with_faulty(fault_server))) as gateway:
        client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=MASTER_KEY, max_retries=0)
        hi = [{"role": "user", "content": "hi"}]
        client.chat.completions.create(model="faulty:o4-mini", messages=hi, reasoning_effort="high")  # type: ignore[arg-type]
        assert fault_server.requests[-1].body["reasoning_effort"] == "high"
        upstream.reply(message([text_block("hello")]))
        client.responses.create(model=f"anthropic:{MODEL}", input="hi", reasoning={"effort": "medium"})
        sent = upstream.bodies[-1]
        assert (sent["thinking"], sent["output_config"]["effort"]) == ({"type": "adaptive"}, "medium")
        with pytest.raises(openai.BadRequestError, match="reasoning_effort"):  # no API has this effort
            client.chat.completions.create(model="faulty:o4-mini", messages=hi, reasoning_effort="extreme")  # type: ignore[arg-type]
        assert len(fault_server.requests) == 1
