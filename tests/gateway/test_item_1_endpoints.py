"""Issue 22 item 1: the endpoints' wire shapes, through the official SDKs, checked against the published schemas."""

from __future__ import annotations

import asyncio
import base64
import json
import struct
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.contract.openapi import validate_openai
from tests.gateway.harness import MASTER_KEY, PROVIDER_KEY, Gateway
from tests.support.fault_server import FaultServer
from tests.support.faults import Fault

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


def _openai(gateway: Gateway) -> openai.OpenAI:
    return openai.OpenAI(base_url=gateway.url + "/v1", api_key=MASTER_KEY, max_retries=0)


def _anthropic(gateway: Gateway) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=gateway.url, api_key=MASTER_KEY, max_retries=0)


def _sse_data(text: str) -> list[Any]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ") and line != "data: [DONE]"]


def test_item_1_chat_completions_whole_matches_the_openapi_schema(gateway: Gateway) -> None:
    raw = _openai(gateway).chat.completions.with_raw_response.create(
        model="mock:echo", messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi there"}]
    )
    body = raw.http_response.json()
    validate_openai("CreateChatCompletionResponse", body)
    completion = raw.parse()
    assert completion.choices[0].message.content == "hi there"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.completion_tokens == 2
    sent = gateway.mock.calls[-1]
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]


def test_item_1_chat_completions_async_and_an_alias(gateway: Gateway) -> None:
    async def ask() -> str | None:
        async with openai.AsyncOpenAI(base_url=gateway.url + "/v1", api_key=MASTER_KEY, max_retries=0) as client:
            answer = await client.chat.completions.create(
                model="fast", messages=[{"role": "user", "content": "aliased"}]
            )
            return answer.choices[0].message.content

    assert asyncio.run(ask()) == "aliased"


def test_item_1_chat_stream_chunks_match_the_schema_and_usage_comes_last(gateway: Gateway) -> None:
    with httpx.Client(base_url=gateway.url, headers={"authorization": f"Bearer {MASTER_KEY}"}) as http:
        reply = http.post(
            "/v1/chat/completions",
            json={
                "model": "mock:echo",
                "messages": [{"role": "user", "content": "one two three"}],
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        )
    assert reply.headers["content-type"].startswith("text/event-stream")
    assert reply.text.rstrip().endswith("data: [DONE]")
    chunks = _sse_data(reply.text)
    for chunk in chunks:
        validate_openai("CreateChatCompletionStreamResponse", chunk)
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]) == "one two three"
    assert [c["usage"] is not None for c in chunks] == [False] * (len(chunks) - 1) + [True]
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 3
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"


def test_item_1_chat_tools_go_out_and_tool_calls_come_back(gateway: Gateway) -> None:
    gateway.mock.push(tool_calls=[{"id": "call_1", "name": "weather", "arguments": '{"city": "Paris"}'}])
    tools = [
        {
            "type": "function",
            "function": {
                "name": "weather",
                "description": "Weather of a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ]
    client = _openai(gateway)
    first = client.chat.completions.create(
        model="mock:echo", messages=[{"role": "user", "content": "weather?"}], tools=tools, tool_choice="auto"
    )
    call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert first.choices[0].finish_reason == "tool_calls"
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_1",
        "weather",
        {"city": "Paris"},
    )  # type: ignore[union-attr]
    client.chat.completions.create(
        model="mock:echo",
        tools=tools,
        messages=[
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ],
    )
    sent = gateway.mock.calls[-1]
    assert sent["tools"][0]["name"] == "weather"
    assert sent["messages"][1]["tool_calls"][0]["id"] == "call_1"
    assert sent["messages"][2] == {"role": "tool", "content": "sunny", "tool_call_id": "call_1"}


def test_item_1_chat_images_reach_the_provider_as_parts(gateway: Gateway) -> None:
    _openai(gateway).chat.completions.create(
        model="mock:echo",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                ],
            }
        ],
    )
    content = gateway.mock.calls[-1]["messages"][0]["content"]
    assert content[0] == "what is this?" and content[1]["media_type"] == "image/png"


def test_item_1_responses_whole_stream_and_previous_response_id(gateway: Gateway) -> None:
    client = _openai(gateway)
    raw = client.responses.with_raw_response.create(model="mock:echo", input="hello responses", instructions="be kind")
    validate_openai("Response", raw.http_response.json())
    first = raw.parse()
    assert first.output_text == "hello responses"
    second = client.responses.create(model="mock:echo", input="again", previous_response_id=first.id)
    assert gateway.mock.calls[-1]["previous_response_id"] == first.id
    assert second.id != first.id
    with client.responses.stream(model="mock:echo", input="streamed words here") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert final.output_text == "streamed words here" and final.usage is not None


def test_item_1_previous_response_id_on_a_provider_without_chains_is_a_typed_400(
    gateway: Gateway, fault_server: FaultServer
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        _openai(gateway).responses.create(model="faulty:gpt-4o-mini", input="x", previous_response_id="resp_1")
    assert caught.value.status_code == 400
    assert "previous_response_id" in caught.value.message
    assert fault_server.request_count == 0  # refused before anything was sent


def test_item_1_embeddings_float_base64_and_dimensions(gateway: Gateway) -> None:
    client = _openai(gateway)
    raw = client.embeddings.with_raw_response.create(
        model="mock:embed", input=["alpha", "beta"], encoding_format="float"
    )
    validate_openai("CreateEmbeddingResponse", raw.http_response.json())
    floats = raw.parse()
    assert client.embeddings.create(model="mock:embed", input=["alpha"]).data[0].embedding == pytest.approx(
        floats.data[0].embedding, abs=1e-6
    )  # the SDK's default asks for base64 and decodes it
    assert [d.index for d in floats.data] == [0, 1] and len(floats.data[0].embedding) == 8
    short = client.embeddings.create(model="mock:embed", input="alpha", dimensions=4)
    assert len(short.data[0].embedding) == 4 and gateway.mock.calls[-1]["dimensions"] == 4
    with httpx.Client(base_url=gateway.url, headers={"authorization": f"Bearer {MASTER_KEY}"}) as http:
        encoded = http.post(
            "/v1/embeddings", json={"model": "mock:embed", "input": "alpha", "encoding_format": "base64"}
        ).json()
    vector = struct.unpack("<8f", base64.b64decode(encoded["data"][0]["embedding"]))
    assert vector == pytest.approx(floats.data[0].embedding, abs=1e-6)


def test_item_1_models_lists_the_configured_models(gateway: Gateway) -> None:
    raw = _openai(gateway).models.with_raw_response.list()
    validate_openai("ListModelsResponse", raw.http_response.json())
    assert {"fast", "mock:echo", "mock:embed"} <= {m.id for m in raw.parse().data}


def test_item_1_messages_whole_with_everything_a_coding_agent_sends(gateway: Gateway) -> None:
    gateway.mock.push("done", usage={"input_tokens": 40, "output_tokens": 1, "cached_tokens": 30})
    message = _anthropic(gateway).messages.create(
        model="mock:echo",  # no prompt cache: cache_control marks are refused (test_item_1_fidelity.py has them)
        max_tokens=2000,
        system=[{"type": "text", "text": "You are a coder."}],
        thinking={"type": "enabled", "budget_tokens": 1024},
        tools=[{"name": "read", "description": "read a file", "input_schema": {"type": "object", "properties": {}}}],
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                    {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.py"}},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "print(1)"}]},
        ],
    )
    assert message.content[0].type == "text" and message.content[0].text == "done"
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.cache_read_input_tokens) == (10, 30)
    sent = gateway.mock.calls[-1]
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "tool"]
    assert sent["messages"][2]["tool_calls"][0] == {"id": "toolu_1", "name": "read", "arguments": '{"path": "a.py"}'}
    assert sent["options"]["max_tokens"] == 2000
    assert sent["options"]["reasoning_effort"] == "low"


def test_item_1_messages_stream_and_tool_use_through_the_sdk_accumulator(gateway: Gateway) -> None:
    gateway.mock.push("let me check", tool_calls=[{"id": "toolu_9", "name": "read", "arguments": '{"path": "b"}'}])
    client = _anthropic(gateway)
    with client.messages.stream(
        model="mock:echo",
        max_tokens=50,
        tools=[{"name": "read", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}],
        messages=[{"role": "user", "content": "read b"}],
    ) as stream:
        final = stream.get_final_message()
    assert [block.type for block in final.content] == ["text", "tool_use"]
    assert final.content[1].input == {"path": "b"}  # type: ignore[union-attr]
    assert final.stop_reason == "tool_use"

    async def stream_async() -> str:
        client = anthropic.AsyncAnthropic(base_url=gateway.url, api_key=MASTER_KEY, max_retries=0)
        async with (
            client,
            client.messages.stream(
                model="mock:echo", max_tokens=20, messages=[{"role": "user", "content": "async words"}]
            ) as events,
        ):
            return "".join([text async for text in events.text_stream])

    assert asyncio.run(stream_async()) == "async words"


def test_item_1_an_anthropic_client_reaches_an_openai_provider(gateway: Gateway, fault_server: FaultServer) -> None:
    fault_server.enqueue(Fault.ok(text="from openai"))
    message = _anthropic(gateway).messages.create(
        model="faulty:gpt-4o-mini", max_tokens=20, messages=[{"role": "user", "content": "hi"}]
    )
    assert message.content[0].text == "from openai"  # type: ignore[union-attr]
    assert fault_server.requests[-1].path == "/v1/chat/completions"


def test_item_1_malformed_requests_get_each_apis_error_shape(gateway: Gateway) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        _openai(gateway).chat.completions.create(model="mock:echo", messages=[{"role": "user", "content": 5}])  # type: ignore[list-item]
    assert caught.value.param is not None and caught.value.param.startswith("messages.0.content")
    with pytest.raises(anthropic.BadRequestError) as bad:
        _anthropic(gateway).messages.create(
            model="mock:echo", max_tokens=0, messages=[{"role": "user", "content": "x"}]
        )
    assert bad.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError):
        _openai(gateway).chat.completions.create(model="nosuchprovider:x", messages=[{"role": "user", "content": "x"}])


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_item_1_a_rate_limit_is_a_429_with_retry_after(gateway: Gateway, fault_server: FaultServer, api: str) -> None:
    fault_server.enqueue(Fault.rate_limit(retry_after=7))
    error_class = openai.RateLimitError if api == "openai" else anthropic.RateLimitError
    with pytest.raises(error_class) as caught:
        _call(gateway, api)
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "7"


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_item_1_a_context_overflow_is_a_400_the_sdk_reads_as_one(
    gateway: Gateway, fault_server: FaultServer, api: str
) -> None:
    from tests.contract import fixtures_openai as fx

    fault_server.enqueue(Fault.json(400, fx.context_length_exceeded_error()))
    error_class = openai.BadRequestError if api == "openai" else anthropic.BadRequestError
    with pytest.raises(error_class) as caught:
        _call(gateway, api)
    if api == "openai":
        assert caught.value.code == "context_length_exceeded"  # type: ignore[attr-defined]
    else:
        assert caught.value.body["error"]["message"].startswith("prompt is too long")  # type: ignore[index]


@pytest.mark.parametrize(
    ("fault", "status"),
    [(Fault.malformed_json(), 502), (Fault.truncated(), 502), (Fault.server_error(500), 502), (Fault.hang(6), 504)],
    ids=["malformed", "truncated", "server-error", "hang"],
)
@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_item_1_unreadable_upstream_is_502_and_a_timeout_504(
    gateway: Gateway, fault_server: FaultServer, api: str, fault: Fault, status: int
) -> None:
    fault_server.enqueue(fault)
    error_class = openai.APIStatusError if api == "openai" else anthropic.APIStatusError
    with pytest.raises(error_class) as caught:
        _call(gateway, api)
    assert caught.value.status_code == status
    assert _secret_free(caught.value.response.text)


def _secret_free(text: str) -> bool:
    return PROVIDER_KEY not in text and MASTER_KEY not in text


def _call(gateway: Gateway, api: str) -> Any:
    if api == "openai":
        return _openai(gateway).chat.completions.create(
            model="faulty:gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
        )
    return _anthropic(gateway).messages.create(
        model="faulty:gpt-4o-mini", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
    )


def _stream_lines(gateway: Gateway, path: str, body: dict[str, Any]) -> list[Any]:
    with httpx.Client(base_url=gateway.url, headers={"x-api-key": MASTER_KEY}) as http:
        reply = http.post(path, json=body)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
    events = reply.text.split("\n\n")
    names = [e.split("\n", 1)[0][7:] for e in events if e.startswith("event: ")]
    data = _sse_data(reply.text)
    assert names == [d["type"] for d in data]  # each event's name is its data's type
    return data


def test_item_1_responses_stream_events_match_the_openapi_schema(gateway: Gateway) -> None:
    gateway.mock.push("two words", tool_calls=[{"id": "call_7", "name": "f", "arguments": '{"a": 1}'}])
    events = _stream_lines(gateway, "/v1/responses", {"model": "mock:echo", "input": "x", "stream": True})
    for event in events:
        validate_openai("ResponseStreamEvent", event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    final = events[-1]["response"]
    validate_openai("Response", final)
    assert [item["type"] for item in final["output"]] == ["message", "function_call"]
    assert final["output"][1]["arguments"] == '{"a": 1}'


def test_item_1_messages_match_the_anthropic_sdk_types_whole_and_streamed(gateway: Gateway) -> None:
    from pydantic import TypeAdapter

    body = {"model": "mock:echo", "max_tokens": 20, "messages": [{"role": "user", "content": "typed words"}]}
    gateway.mock.push("typed words", tool_calls=[{"id": "toolu_2", "name": "f", "arguments": '{"b": 2}'}])
    raw = _anthropic(gateway).messages.with_raw_response.create(**body)  # type: ignore[arg-type]
    message = anthropic.types.Message.model_validate(raw.http_response.json(), strict=False)
    assert [block.type for block in message.content] == ["text", "tool_use"]
    gateway.mock.push("typed words", tool_calls=[{"id": "toolu_2", "name": "f", "arguments": '{"b": 2}'}])
    events = _stream_lines(gateway, "/v1/messages", {**body, "stream": True})
    adapter: TypeAdapter[Any] = TypeAdapter(anthropic.types.RawMessageStreamEvent)
    kinds = [type(adapter.validate_python(event)).__name__ for event in events]
    assert kinds[0] == "RawMessageStartEvent" and kinds[-2:] == ["RawMessageDeltaEvent", "RawMessageStopEvent"]
    assert kinds.count("RawContentBlockStartEvent") == kinds.count("RawContentBlockStopEvent") == 2


def test_item_1_chat_response_format_json_schema_becomes_structured_output(gateway: Gateway) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    gateway.mock.push('{"city": "Paris"}')
    answer = _openai(gateway).chat.completions.create(
        model="mock:echo",
        messages=[{"role": "user", "content": "capital of France?"}],
        response_format={"type": "json_schema", "json_schema": {"name": "city", "schema": schema}},
    )
    assert json.loads(answer.choices[0].message.content or "") == {"city": "Paris"}
    sent = json.dumps(gateway.mock.calls[-1])
    assert '"city"' in sent  # the mock has no native structured output: core sent the schema its own way
    with pytest.raises(openai.BadRequestError):
        _openai(gateway).chat.completions.create(
            model="mock:echo",
            messages=[{"role": "user", "content": "x"}],
            response_format={"type": "json_schema", "json_schema": {"name": "city", "schema": schema}},
            stream=True,
        )
