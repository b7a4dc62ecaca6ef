"""``POST /v1/messages/count_tokens`` holds the provider's count to the config's ``timeout``, as a call is held."""

from __future__ import annotations

import asyncio

import httpx
import respx

from tests.gateway.harness import MASTER_KEY, gateway_config, running_gateway

MESSAGES = [{"role": "user", "content": "Count me."}]


def test_item_1_hostile_a_count_that_never_answers_ends_at_the_timeout(respx_mock: respx.MockRouter) -> None:
    """The provider's count endpoint accepts the request and never answers: the gateway answers a timeout
    error once the config's ``timeout`` has passed, instead of holding the client for the SDK's own timeout."""
    key = "sk-openai-count-secret-0123456789"

    async def never(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(60)  # bounded: the gateway's deadline cancels it long before
        return httpx.Response(200, json={"input_tokens": 1})

    respx_mock.route(host="127.0.0.1").pass_through()
    respx_mock.post("https://api.openai.com/v1/responses/input_tokens").mock(side_effect=never)
    providers = {"openai": {"api_key": key, "api": "chat"}}
    with running_gateway(gateway_config(None, providers=providers, timeout=0.5)) as gateway:
        answer = httpx.post(
            gateway.url + "/v1/messages/count_tokens",
            headers={"x-api-key": MASTER_KEY},
            json={"model": "openai:gpt-4o-mini", "messages": MESSAGES},
            timeout=30,
        )
    assert answer.status_code == 504, answer.text
    assert "timeout" in answer.text
    assert key not in answer.text
