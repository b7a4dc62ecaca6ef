"""Issue 26 item 3: Azure OpenAI as ``azure:DEPLOYMENT`` — deployments, ``api-version``, the ``api-key`` header
or a Microsoft Entra ID token, Azure's error shapes (content-filter blocks as refusals with their categories),
Chat Completions and the v1 Responses API.

Faked at the HTTP layer under the openai SDK's ``AzureOpenAI`` clients, with bodies shaped like Azure OpenAI's
REST reference and its content-filtering guide.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

import llmplex
from llmplex.errors import (
    LLMAuthenticationError,
    LLMConfigurationError,
    LLMError,
    LLMRateLimitError,
    LLMRefusalError,
)
from llmplex.testing import Answer, OpenAIChatWire, Reply, WireServer, sse

KEY = "azkey-3f0c9e8d7b6a5f4e3d2c1b0a"
ENDPOINT = "https://my-resource.openai.azure.com"
WIRE = OpenAIChatWire()
CATEGORIES = {
    "hate": {"filtered": False, "severity": "safe"},
    "jailbreak": {"filtered": False, "detected": False},
    "self_harm": {"filtered": False, "severity": "safe"},
    "sexual": {"filtered": False, "severity": "safe"},
    "violence": {"filtered": True, "severity": "medium"},
}
PROMPT_FILTERED = {
    "error": {
        "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. "
        "Please modify your prompt and retry. To learn more about our content filtering policies please read our "
        "documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
        "type": None,
        "param": "prompt",
        "code": "content_filter",
        "status": 400,
        "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": CATEGORIES},
    }
}
"""A prompt the content filter blocked: HTTP 400 (Azure OpenAI content filtering, "Scenario details")."""


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_API_VERSION", "OPENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer() as running:
        yield running


def _client(**settings: Any) -> llmplex.Client:
    return llmplex.Client(providers={"azure": settings}, throttle={"max_attempts": 1})


def _answer(text: str = "Hello from Azure") -> dict[str, Any]:
    body = WIRE.response(Reply(text=text, model="gpt-4o-2024-08-06", response_id="chatcmpl-az"))
    body["prompt_filter_results"] = [{"prompt_index": 0, "content_filter_results": CATEGORIES | {
        "violence": {"filtered": False, "severity": "safe"}}}]  # fmt: skip
    return body


def test_item_3_deployment_url_api_version_and_api_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", ENDPOINT)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-not-be-sent")
    url = f"{ENDPOINT}/openai/deployments/prod-gpt4o/chat/completions"
    with respx.mock(assert_all_called=True) as router:
        route = router.post(url, params={"api-version": "2024-10-21"}).mock(httpx.Response(200, json=_answer()))
        response = llmplex.Client().complete("azure:prod-gpt4o", "Hi", max_tokens=20)
    assert (response.text, response.provider, response.model) == ("Hello from Azure", "azure", "gpt-4o-2024-08-06")
    sent = route.calls.last.request
    assert sent.headers["api-key"] == KEY
    # openai 2.17 (the floor) also sends the key as a bearer token to the same endpoint; never another key
    assert sent.headers.get("authorization", f"Bearer {KEY}") == f"Bearer {KEY}"
    assert httpx.Response(200, content=sent.content).json()["max_completion_tokens"] == 20


def test_item_3_api_version_setting_and_the_v1_responses_path(server: WireServer) -> None:
    server.push(Answer.json(200, _answer()))
    _client(endpoint=server.url, api_key=KEY, api_version="2025-04-01-preview").complete("azure:dep", "Hi")
    assert server.received[0].query == {"api-version": ["2025-04-01-preview"]}
    response_body = {
        "id": "resp_az1",
        "object": "response",
        "created_at": 1741476542,
        "status": "completed",
        "model": "gpt-4.1-nano",
        "output": [
            {
                "type": "message",
                "id": "msg_az1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "From the v1 API", "annotations": []}],
            }
        ],
        "usage": {"input_tokens": 9, "output_tokens": 4, "total_tokens": 13},
    }
    server.push(Answer.json(200, response_body))
    client = _client(endpoint=server.url, api_key=KEY, api="responses")
    assert client.complete("azure:gpt-4.1-nano", "Hi").text == "From the v1 API"
    received = server.received[1]
    assert (received.path, received.headers["api-key"]) == ("/openai/v1/responses", KEY)
    assert received.json()["model"] == "gpt-4.1-nano"


def test_item_3_a_microsoft_entra_id_token_provider_instead_of_a_key(server: WireServer) -> None:
    tokens = iter(["entra-token-1", "entra-token-2"])
    server.push(Answer.json(200, _answer()), Answer.json(200, _answer()))
    client = _client(endpoint=server.url, azure_ad_token_provider=lambda: next(tokens))
    client.complete("azure:dep", "Hi")

    async def again() -> str:
        return (await client.acomplete("azure:dep", "Hi")).text

    assert asyncio.run(again()) == "Hello from Azure"
    first, second = server.received
    assert first.headers["authorization"] == "Bearer entra-token-1" and "api-key" not in first.headers
    assert second.headers["authorization"] == "Bearer entra-token-2"  # asked for each request: refreshed tokens


def test_item_3_entra_id_without_azure_identity_says_what_to_install(
    server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "azure.identity", None)  # as if azure-identity were not installed
    with pytest.raises(LLMConfigurationError, match=r"llmplex-azure\[entra\]"):
        _client(endpoint=server.url, entra_id=True).complete("azure:dep", "Hi")
    assert server.received == []


def test_item_3_missing_endpoint_or_key_is_a_config_error_naming_the_variables(server: WireServer) -> None:
    with pytest.raises(LLMConfigurationError, match="AZURE_OPENAI_ENDPOINT") as caught:
        llmplex.Client().complete("azure:dep", "Hi")
    assert "AZURE_OPENAI_API_KEY" in str(caught.value)
    with pytest.raises(LLMConfigurationError, match="AZURE_OPENAI_API_KEY"):
        _client(endpoint=server.url).complete("azure:dep", "Hi")
    assert server.received == []


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_item_3_a_content_filtered_prompt_is_a_refusal_with_its_categories(server: WireServer, api: str) -> None:
    server.push(Answer.json(400, PROMPT_FILTERED), Answer.json(400, PROMPT_FILTERED))
    client = _client(endpoint=server.url, api_key=KEY, api=api)
    with pytest.raises(LLMRefusalError) as caught:
        client.complete("azure:dep", "something violent")
    error = caught.value
    assert "violence (medium)" in str(error) and "hate" not in str(error)
    assert error.context["content_filter_categories"] == {"violence": "medium"}
    assert error.refusal and "content filter" in error.refusal

    async def streamed() -> None:
        async for _ in client.astream("azure:dep", "something violent"):
            pass

    with pytest.raises(LLMRefusalError, match=r"violence \(medium\)"):
        asyncio.run(streamed())


def test_item_3_an_answer_the_filter_ended_is_a_refusal_with_its_categories(server: WireServer) -> None:
    filtered = _answer("")
    filtered["choices"][0].update(
        finish_reason="content_filter",
        content_filter_results={**CATEGORIES, "violence": {"filtered": False, "severity": "safe"},
                                "self_harm": {"filtered": True, "severity": "high"}},
    )  # fmt: skip
    filtered["choices"][0]["message"]["content"] = None
    server.push(Answer.json(200, filtered))
    client = _client(endpoint=server.url, api_key=KEY)
    with pytest.raises(LLMRefusalError, match=r"self_harm \(high\)"):
        client.complete("azure:dep", "Hi")
    head = {"id": "chatcmpl-az", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    first = {"index": 0, "delta": {"role": "assistant", "content": "Once"}, "finish_reason": None}
    blocked = {"sexual": {"filtered": True, "severity": "medium"}}
    last = {"index": 0, "delta": {}, "finish_reason": "content_filter", "content_filter_results": blocked}
    prompt_results = [{"prompt_index": 0, "content_filter_results": {}}]
    chunks = [
        sse({**head, "choices": [], "prompt_filter_results": prompt_results}),
        sse({**head, "choices": [first]}),
        sse({**head, "choices": [last]}),
        sse("[DONE]"),
    ]
    server.push(Answer.stream(chunks))
    texts: list[str] = []

    def drain() -> None:
        for event in client.stream("azure:dep", "Tell a story"):
            texts.append(event.text)

    with pytest.raises(LLMRefusalError, match=r"sexual \(medium\)"):
        drain()
    assert "Once" in texts


def test_item_3_azure_rate_limits_and_key_echoing_errors(server: WireServer) -> None:
    limited = {
        "error": {
            "code": "429",
            "message": "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 "
            "have exceeded token rate limit of your current AIServices S0 pricing tier. Please retry after 6 seconds.",
        }
    }
    echo = {"error": {"code": "401", "message": f"Access denied due to invalid subscription key {KEY}."}}
    server.push(Answer.json(429, limited, {"retry-after": "6"}), Answer.json(401, echo, {"x-key": KEY}))
    client = _client(endpoint=server.url, api_key=KEY)
    with pytest.raises(LLMRateLimitError) as limit:
        client.complete("azure:dep", "Hi")
    assert limit.value.retry_after == 6
    with pytest.raises(LLMAuthenticationError) as denied:
        client.complete("azure:dep", "Hi")
    shown = " ".join([str(denied.value), repr(denied.value), repr(denied.value.cause), str(denied.value.response_body)])
    assert KEY not in shown and KEY not in repr(client.router.instance("azure").settings)


def test_item_3_embeddings_go_to_the_deployment(server: WireServer) -> None:
    data = [{"object": "embedding", "index": 0, "embedding": [0.5, 0.25]}]
    body = {
        "object": "list",
        "data": data,
        "model": "text-embedding-3-small",
        "usage": {"prompt_tokens": 2, "total_tokens": 2},
    }
    server.push(Answer.json(200, body))
    result = _client(endpoint=server.url, api_key=KEY).embed("azure:my-embedder", "hello", dimensions=2)
    assert result.vectors == [[0.5, 0.25]]
    (received,) = server.received
    assert received.path == "/openai/deployments/my-embedder/embeddings"
    assert received.json()["dimensions"] == 2


def test_item_3_a_failing_token_provider_is_a_typed_error_and_nothing_is_sent(server: WireServer) -> None:
    def expired() -> str:
        raise RuntimeError("token refresh failed: the managed identity is not reachable")

    with pytest.raises(LLMError, match="token refresh failed") as caught:
        _client(endpoint=server.url, azure_ad_token_provider=expired).complete("azure:dep", "Hi")
    assert isinstance(caught.value.cause, RuntimeError)
    assert server.received == []
