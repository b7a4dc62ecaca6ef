"""Issue 34 item 2: a whole Azure OpenAI answer with a fixed key takes the openai plugin's lean path.

The lean request is the SDK's own (the deployment's URL, ``api-version``, ``api-key``, every header, the body's
bytes), the answer the same ``Response``, failures the SDK's exceptions classified alike; a client with an Entra ID
token and every stream still go through the SDK. Each comparison sends the same payload both ways under respx.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
import respx
from llmplex_azure import transport
from llmplex_azure.clients import create_client
from llmplex_azure.errors import classify_error
from llmplex_azure.settings import AzureSettings

import llmplex
from llmplex.errors import LLMRateLimitError, LLMRefusalError

ENDPOINT = "https://bench-resource.openai.azure.com"
KEY = "azkey-item2-0123456789abcdef"
CHAT_PAYLOAD = {"model": "prod#gpt-4o", "messages": [{"role": "user", "content": "hi ✓"}], "max_completion_tokens": 9}
RESPONSES_PAYLOAD = {"model": "gpt-4.1-nano", "input": [{"type": "message", "role": "user", "content": "hi"}]}
CHAT_ANSWER = {
    "id": "chatcmpl-az",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4o-2024-08-06",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11},
}
RESPONSES_ANSWER = {
    "id": "resp_az1",
    "object": "response",
    "created_at": 1,
    "status": "completed",
    "model": "gpt-4.1-nano",
    "output": [
        {
            "type": "message",
            "id": "msg_az1",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
        }
    ],
    "usage": {"input_tokens": 9, "output_tokens": 2, "total_tokens": 11},
}
FILTERED = {
    "error": {
        "message": "filtered",
        "code": "content_filter",
        "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": {"hate": {"filtered": True}}},
    }
}


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ("AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_API_VERSION", "OPENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def wire() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as router:
        yield router


def _sdk_send(client: openai.AzureOpenAI, api: str, payload: dict[str, Any], timeout: float | None) -> Any:
    """The SDK's own call, as ``transport.send`` made it before the lean path."""
    if api == "chat":
        payload = {**payload, "model": transport.deployment(payload["model"])}
    create: Any = client.chat.completions.create if api == "chat" else client.responses.create
    return create(**transport._kwargs(create, payload, timeout))


def _capture(router: respx.MockRouter, answer: dict[str, Any]) -> list[httpx.Request]:
    seen: list[httpx.Request] = []

    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=answer)

    router.route(method="POST", host="bench-resource.openai.azure.com").mock(side_effect=reply)
    return seen


@pytest.mark.parametrize(
    ("api", "payload", "answer"),
    [("chat", CHAT_PAYLOAD, CHAT_ANSWER), ("responses", RESPONSES_PAYLOAD, RESPONSES_ANSWER)],
)
@pytest.mark.parametrize("timeout", [None, 7.5])
def test_item_2_azure_lean_path_sends_the_sdks_request(
    wire: respx.MockRouter, api: str, payload: dict[str, Any], answer: dict[str, Any], timeout: float | None
) -> None:
    seen = _capture(wire, answer)
    client = create_client(AzureSettings(endpoint=ENDPOINT, api_key=KEY, api=api))
    through_sdk = _sdk_send(client, api, payload, timeout)
    lean = transport.send(client, api, payload, timeout)
    sdk_request, lean_request = seen
    assert lean_request.url == sdk_request.url and "api-version=" in str(lean_request.url)
    assert lean_request.content == sdk_request.content
    assert lean_request.headers.multi_items() == sdk_request.headers.multi_items()
    assert lean_request.headers["api-key"] == KEY
    assert lean_request.extensions["timeout"] == sdk_request.extensions["timeout"]
    assert isinstance(through_sdk, openai.BaseModel) and lean == answer  # the decoded JSON, not the SDK's model
    if api == "chat":
        assert lean_request.url.raw_path.startswith(b"/openai/deployments/prod%23gpt-4o/chat/completions")


def _client(monkeypatch: pytest.MonkeyPatch, *, lean: bool, **settings: Any) -> llmplex.Client:
    if not lean:
        monkeypatch.setattr(transport, "_lean", lambda *_: False)
    return llmplex.Client(providers={"azure": {"endpoint": ENDPOINT, "api_key": KEY, **settings}})


@pytest.mark.parametrize(("api", "answer"), [("chat", CHAT_ANSWER), ("responses", RESPONSES_ANSWER)])
def test_item_2_azure_lean_answer_is_the_sdk_paths_response(
    wire: respx.MockRouter, monkeypatch: pytest.MonkeyPatch, api: str, answer: dict[str, Any]
) -> None:
    _capture(wire, answer)
    lean = _client(monkeypatch, lean=True, api=api).complete("azure:dep", "hi")
    sdk = _client(monkeypatch, lean=False, api=api).complete("azure:dep", "hi")
    fields = ("text", "finish_reason", "usage", "model", "provider", "response_id", "tool_calls", "attempts")
    assert [getattr(lean, f) for f in fields] == [getattr(sdk, f) for f in fields]
    assert (lean.usage.cost_usd, lean.usage.cost_note) == (
        sdk.usage.cost_usd,
        sdk.usage.cost_note,
    ) and lean.text == "Hello"
    assert type(lean.raw) is dict and isinstance(sdk.raw, openai.BaseModel)


@pytest.mark.parametrize(
    ("status", "body", "headers", "kind"),
    [(400, FILTERED, {}, LLMRefusalError), (429, {"error": {"message": "slow", "code": "429"}}, {"retry-after": "3"},
                                                LLMRateLimitError)],
)  # fmt: skip
def test_item_2_azure_lean_errors_are_the_sdks(
    wire: respx.MockRouter, status: int, body: dict[str, Any], headers: dict[str, str], kind: type[Exception]
) -> None:
    wire.route(method="POST").mock(side_effect=lambda _: httpx.Response(status, json=body, headers=headers))
    client = create_client(AzureSettings(endpoint=ENDPOINT, api_key=KEY))
    caught = []
    for send in (_sdk_send, transport.send):
        with pytest.raises(openai.APIStatusError) as error:
            send(client, "chat", CHAT_PAYLOAD, None)
        caught.append(error.value)
    sdk, lean = (classify_error(error) for error in caught)
    assert type(caught[1]) is type(caught[0]) and isinstance(lean, kind)
    assert (type(lean), str(lean), lean.context) == (type(sdk), str(sdk), sdk.context)
    assert getattr(lean, "status_code", None) == getattr(sdk, "status_code", None)
    assert getattr(lean, "retry_after", None) == getattr(sdk, "retry_after", None)


def test_item_2_azure_entra_tokens_and_streams_stay_on_the_sdk(wire: respx.MockRouter) -> None:
    """A token provider is asked for every request (the lean template would freeze one token); a stream is the SDK's."""
    seen = _capture(wire, CHAT_ANSWER)
    tokens = iter(["token-1", "token-2"])
    settings = AzureSettings(endpoint=ENDPOINT, azure_ad_token_provider=lambda: next(tokens))
    client = create_client(settings)
    answers = [transport.send(client, "chat", CHAT_PAYLOAD, None) for _ in range(2)]
    assert all(isinstance(answer, openai.BaseModel) for answer in answers)
    assert [request.headers["authorization"] for request in seen] == ["Bearer token-1", "Bearer token-2"]
    keyed = create_client(AzureSettings(endpoint=ENDPOINT, api_key=KEY))
    wire.routes.clear()
    wire.route(method="POST").mock(
        return_value=httpx.Response(200, text="data: [DONE]\n\n", headers={"content-type": "text/event-stream"})
    )
    stream = transport.send(keyed, "chat", {**CHAT_PAYLOAD, "stream": True}, None)
    assert isinstance(stream, openai.Stream)
    stream.close()


def test_item_2_azure_lean_templates_are_bounded_per_client(
    wire: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each deployment's request template is kept; past the bound, further deployments go through the SDK."""
    _capture(wire, CHAT_ANSWER)
    monkeypatch.setattr(transport, "MAX_LEAN_PATHS", 3)
    client = create_client(AzureSettings(endpoint=ENDPOINT, api_key=KEY))
    answers = [transport.send(client, "chat", {**CHAT_PAYLOAD, "model": f"dep-{i}"}, None) for i in range(5)]
    assert [type(answer) is dict for answer in answers] == [True, True, True, False, False]
    assert isinstance(answers[4], openai.BaseModel)
    assert type(transport.send(client, "chat", {**CHAT_PAYLOAD, "model": "dep-0"}, None)) is dict  # kept: still lean
