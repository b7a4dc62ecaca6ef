"""Issue 32 item 1: ``POST /v1/messages/count_tokens`` when the provider's own count fails."""

from __future__ import annotations

import httpx
import respx

from tests.gateway.harness import MASTER_KEY, gateway_config, running_gateway

MESSAGES = [{"role": "user", "content": "Count me."}]


def test_item_1_hostile_an_upstream_count_error_is_the_providers_typed_error(respx_mock: respx.MockRouter) -> None:
    """The provider's count failing (a 429 whose body echoes the key) is classified as a call's failure would be:
    the gateway answers the rate limit (not a 500 internal error) and the key appears nowhere."""
    key = "sk-openai-count-secret-0123456789"
    respx_mock.route(host="127.0.0.1").pass_through()
    respx_mock.post("https://api.openai.com/v1/responses/input_tokens").respond(
        429, json={"error": {"message": f"slow down, {key}", "type": "rate_limit", "code": "rate_limit_exceeded"}}
    )
    providers = {"openai": {"api_key": key, "api": "chat"}}
    with running_gateway(gateway_config(None, providers=providers, timeout=30)) as gateway:
        answer = httpx.post(
            gateway.url + "/v1/messages/count_tokens",
            headers={"x-api-key": MASTER_KEY},
            json={"model": "openai:gpt-4o-mini", "messages": MESSAGES},
        )
    assert answer.status_code == 429, answer.text
    assert answer.json()["error"]["type"] == "rate_limit_error"
    assert key not in answer.text
