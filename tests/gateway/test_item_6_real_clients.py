"""Issue 22 item 6: the official openai and anthropic SDKs, sync, async and streamed, as clients of a real gateway in
front of the fault-injecting server; each failure reaches them as the exception the real API would raise."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import openai
import pytest

from tests.gateway.harness import MASTER_KEY, Gateway
from tests.support.fault_server import FaultServer
from tests.support.faults import Fault

MODES = [f"{sdk}-{kind}" for sdk in ("openai", "anthropic") for kind in ("sync", "async", "stream", "async-stream")]
MESSAGES: Any = [{"role": "user", "content": "hi"}]


def _openai_sync(gateway: Gateway, model: str, stream: bool) -> str:
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=MASTER_KEY, max_retries=0)
    if not stream:
        return client.chat.completions.create(model=model, messages=MESSAGES).choices[0].message.content or ""
    chunks = client.chat.completions.create(model=model, messages=MESSAGES, stream=True)
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


async def _openai_async(gateway: Gateway, model: str, stream: bool) -> str:
    async with openai.AsyncOpenAI(base_url=gateway.url + "/v1", api_key=MASTER_KEY, max_retries=0) as client:
        if not stream:
            answer = await client.chat.completions.create(model=model, messages=MESSAGES)
            return answer.choices[0].message.content or ""
        chunks = await client.chat.completions.create(model=model, messages=MESSAGES, stream=True)
        return "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])


def _anthropic_sync(gateway: Gateway, model: str, stream: bool) -> str:
    client = anthropic.Anthropic(base_url=gateway.url, api_key=MASTER_KEY, max_retries=0)
    if not stream:
        message = client.messages.create(model=model, max_tokens=50, messages=MESSAGES)
        return "".join(block.text for block in message.content if block.type == "text")
    with client.messages.stream(model=model, max_tokens=50, messages=MESSAGES) as events:
        return "".join(events.text_stream)


async def _anthropic_async(gateway: Gateway, model: str, stream: bool) -> str:
    client = anthropic.AsyncAnthropic(base_url=gateway.url, api_key=MASTER_KEY, max_retries=0)
    async with client:
        if not stream:
            message = await client.messages.create(model=model, max_tokens=50, messages=MESSAGES)
            return "".join(block.text for block in message.content if block.type == "text")
        async with client.messages.stream(model=model, max_tokens=50, messages=MESSAGES) as events:
            return "".join([text async for text in events.text_stream])


def ask(gateway: Gateway, mode: str, model: str = "faulty:gpt-4o-mini") -> str:
    """One call of ``model`` through the gateway with the SDK and style ``mode`` names; the answer's text."""
    sdk, _, kind = mode.partition("-")
    stream = kind.endswith("stream")
    if kind.startswith("async"):
        call = _openai_async if sdk == "openai" else _anthropic_async
        return asyncio.run(call(gateway, model, stream))
    return (_openai_sync if sdk == "openai" else _anthropic_sync)(gateway, model, stream)


@pytest.mark.parametrize("mode", MODES)
def test_item_6_every_sdk_style_gets_the_answer(gateway: Gateway, fault_server: FaultServer, mode: str) -> None:
    fault_server.enqueue(Fault.ok(text="Hello from upstream"))
    assert ask(gateway, mode) == "Hello from upstream"
    sent = fault_server.requests[-1]
    assert sent.body["model"] == "gpt-4o-mini" and sent.body.get("stream", False) == mode.endswith("stream")
    assert sent.headers["authorization"] != f"Bearer {MASTER_KEY}"  # the gateway's own key never goes upstream


@pytest.mark.parametrize("mode", MODES)
def test_item_6_every_sdk_style_gets_the_apis_own_exceptions(
    gateway: Gateway, fault_server: FaultServer, mode: str
) -> None:
    sdk = openai if mode.startswith("openai") else anthropic
    fault_server.enqueue(Fault.rate_limit(retry_after=2))
    with pytest.raises(sdk.RateLimitError):
        ask(gateway, mode)
    fault_server.enqueue(Fault.malformed_json())
    with pytest.raises(sdk.APIError) as caught:
        ask(gateway, mode)
    if not mode.endswith("stream"):
        assert isinstance(caught.value, sdk.InternalServerError) and caught.value.status_code == 502
    assert ask(gateway, mode) == "Hello! How can I help?"  # and the next call is fine


def test_item_6_a_chat_client_reaches_a_responses_api_upstream(gateway: Gateway, fault_server: FaultServer) -> None:
    fault_server.enqueue(Fault.ok(text="via responses"))
    assert ask(gateway, "openai-stream", "faultyresp:gpt-4o-mini") == "via responses"
    assert fault_server.requests[-1].path == "/v1/responses"
