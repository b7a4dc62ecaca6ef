"""Issue 32 item 1: ``POST /v1/messages/count_tokens`` for every model: the provider's count, else an estimate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest
import respx

from llmplex.reliability.estimate import IMAGE_TOKENS
from tests.agents.conftest import claude
from tests.agents.scripted import json_server
from tests.gateway.fake_anthropic import FakeAnthropic
from tests.gateway.harness import MASTER_KEY, Gateway, gateway_config, running_gateway
from tests.plugins.anthropic.wire import MODEL

TOOLS: Any = [{"name": "read", "description": "read a file", "input_schema": {"type": "object", "properties": {}}}]
MESSAGES: Any = [{"role": "user", "content": "Count the tokens of this sentence, please."}]


def test_item_1_anthropic_models_get_the_providers_own_count(gateway: Gateway, upstream: FakeAnthropic) -> None:
    upstream.reply({"input_tokens": 321})
    raw = claude(gateway).messages.with_raw_response.count_tokens(
        model=f"anthropic:{MODEL}", system="Be brief.", messages=MESSAGES, tools=TOOLS
    )
    assert raw.parse().input_tokens == 321 and raw.headers["x-llmplex-token-count"] == "provider"
    sent = upstream.bodies[-1]
    assert (sent["model"], sent["system"], sent["tools"][0]["name"]) == (MODEL, "Be brief.", "read")
    assert "max_tokens" not in sent


def test_item_1_a_model_without_a_count_gets_an_estimate_marked_as_one(gateway: Gateway) -> None:
    raw = claude(gateway).messages.with_raw_response.count_tokens(model="mock:echo", messages=MESSAGES, tools=TOOLS)
    tokens = raw.parse().input_tokens
    size = len(MESSAGES[0]["content"]) + len(json.dumps(TOOLS[0]["input_schema"])) + len("readread a file")
    assert size // 6 <= tokens <= size // 2  # about four characters a token
    assert raw.headers["x-llmplex-token-count"] == "estimate"
    assert gateway.mock.calls == []  # counting calls no model


def test_item_1_the_estimate_counts_images_as_budget_reservations_do(gateway: Gateway) -> None:
    """An image is not free to the estimate: counted as the spend estimate counts it (``IMAGE_TOKENS``)."""
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": pixel}}
    content = [{"type": "text", "text": "What is this?"}, image]
    counted = claude(gateway).messages.count_tokens(model="mock:echo", messages=[{"role": "user", "content": content}])
    assert counted.input_tokens >= IMAGE_TOKENS


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"model": "mock:echo"}, "messages"),
        ({"model": "nosuch:model", "messages": MESSAGES}, "nosuch"),
        ({"model": "mock:echo", "messages": []}, "messages"),
        ({"model": "mock:echo", "messages": MESSAGES, "max_tokens": 0}, "max_tokens"),
        ({"model": "mock:echo", "messages": [{"role": "user", "content": [{"type": "bogus"}]}]}, "messages.0"),
    ],
)
def test_item_1_count_tokens_refuses_bad_requests(gateway: Gateway, body: dict[str, Any], needle: str) -> None:
    answer = httpx.post(gateway.url + "/v1/messages/count_tokens", json=body, headers={"x-api-key": MASTER_KEY})
    assert answer.status_code == 400 and needle in answer.json()["error"]["message"]
    assert answer.json()["type"] == "error"


def test_item_1_count_tokens_needs_the_key(gateway: Gateway) -> None:
    stranger = anthropic.Anthropic(base_url=gateway.url, api_key="sk-wrong", max_retries=0)
    with pytest.raises(anthropic.AuthenticationError):
        stranger.messages.count_tokens(model="mock:echo", messages=MESSAGES)


def test_item_1_gemini_and_bedrock_models_get_their_providers_own_count(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    with json_server() as gemini, json_server() as bedrock:
        providers = {
            "gemini": {"base_url": gemini.url, "api_key": "gm-key"},
            "bedrock": {
                "endpoint_url": bedrock.url,
                "region": "us-east-1",
                "aws_access_key_id": "AKIAEXAMPLE",
                "aws_secret_access_key": "secret-example",
            },
        }
        with running_gateway(gateway_config(None, providers=providers, timeout=30)) as gateway:
            gemini.answers.append({"totalTokens": 77})
            bedrock.answers.append({"inputTokens": 88})
            client = claude(gateway)
            for model, tokens in (("gemini:gemini-2.5-flash", 77), ("bedrock:anthropic.claude-sonnet-4-v1:0", 88)):
                raw = client.messages.with_raw_response.count_tokens(
                    model=model, system="Be brief.", messages=MESSAGES, tools=TOOLS
                )
                assert (raw.parse().input_tokens, raw.headers["x-llmplex-token-count"]) == (tokens, "provider")
    path, body = gemini.seen[0]
    assert path.endswith("gemini-2.5-flash:countTokens") and "Be brief." in json.dumps(body)
    assert "read a file" in json.dumps(body)  # the tools, counted as text on the Developer API
    path, body = bedrock.seen[0]
    assert path.endswith("/count-tokens") and body["input"]["converse"]["system"] == [{"text": "Be brief."}]
    assert body["input"]["converse"]["toolConfig"]["tools"][0]["toolSpec"]["name"] == "read"


def test_item_1_openai_models_get_openais_own_count(respx_mock: respx.MockRouter) -> None:
    respx_mock.route(host="127.0.0.1").pass_through()  # the test's own calls to the gateway
    counted = respx_mock.post("https://api.openai.com/v1/responses/input_tokens").respond(
        json={"object": "response.input_tokens", "input_tokens": 55}
    )
    providers = {
        "openai": {"api_key": "sk-openai-test-key", "api": "chat"},
        "faulty": {"plugin": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key": "k"},
    }
    with running_gateway(gateway_config(None, providers=providers, timeout=30)) as gateway:
        client = claude(gateway)
        raw = client.messages.with_raw_response.count_tokens(
            model="openai:gpt-4o-mini", system="Be brief.", messages=MESSAGES, tools=TOOLS
        )
        assert (raw.parse().input_tokens, raw.headers["x-llmplex-token-count"]) == (55, "provider")
        other = client.messages.with_raw_response.count_tokens(model="faulty:gpt-4o-mini", messages=MESSAGES)
        assert other.headers["x-llmplex-token-count"] == "estimate"  # another server behind the plugin: no count
    sent = json.loads(counted.calls[0].request.content)
    assert sent["model"] == "gpt-4o-mini" and "Be brief." in json.dumps(sent) and sent["tools"][0]["name"] == "read"
    assert counted.call_count == 1
