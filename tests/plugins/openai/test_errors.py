"""Every failure of the SDK lands in the core taxonomy, keeping what matters for diagnosis."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from llmplex_openai.errors import classify_error

import llmplex
from tests.contract import fixtures_openai as fx
from tests.plugins.openai.conftest import LOCAL_PROVIDER, FakeAPI

CHAT = "/chat/completions"
RESPONSES = "/responses"


def test_rate_limit_keeps_status_request_id_headers_body_and_cause(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    headers = {"x-request-id": "req_abc123", "retry-after-ms": "1500", "retry-after": "9"}
    openai_api.reply(RESPONSES, fx.rate_limit_error(), status=429, headers=headers)

    with pytest.raises(llmplex.LLMRateLimitError) as caught:
        llm.complete("openai:gpt-4o-mini", "hi")

    error = caught.value
    assert (error.status_code, error.request_id, error.retry_after) == (429, "req_abc123", 1.5)
    assert error.headers["x-request-id"] == "req_abc123"
    assert (error.response_body["code"], error.response_body["type"]) == ("rate_limit_exceeded", "tokens")
    assert isinstance(error.__cause__, openai.RateLimitError)
    assert error.retryable
    assert (error.provider, error.model) == ("openai", "gpt-4o-mini")


@pytest.mark.parametrize(("status", "body"), [(429, fx.rate_limit_error()), (503, fx.server_error(503))])
def test_retry_after_in_seconds_when_no_milliseconds(
    llm: llmplex.Client, local_api: FakeAPI, status: int, body: dict[str, object]
) -> None:
    local_api.reply(CHAT, body, status=status, headers={"retry-after": "2"})

    with pytest.raises((llmplex.LLMRateLimitError, llmplex.LLMServerError)) as caught:
        llm.complete("local:m", "hi")

    assert caught.value.retry_after == 2.0  # type: ignore[union-attr]


def test_insufficient_quota_is_a_rate_limit_that_is_not_retried(llm: llmplex.Client, openai_api: FakeAPI) -> None:
    openai_api.reply(RESPONSES, fx.insufficient_quota_error(), status=429)

    with pytest.raises(llmplex.LLMQuotaExhaustedError) as caught:
        llm.complete("openai:gpt-4o-mini", "hi")

    assert isinstance(caught.value, llmplex.LLMRateLimitError)  # issue 13: every 429 is a rate-limit error
    assert not caught.value.retryable
    assert len(openai_api.requests) == 1
    assert caught.value.status_code == 429


def test_context_too_long_says_so(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.reply(CHAT, fx.context_length_exceeded_error(), status=400)

    with pytest.raises(llmplex.LLMBadRequestError, match="context window") as caught:
        llm.complete("local:m", "a very long prompt")

    assert caught.value.status_code == 400
    assert not caught.value.retryable


@pytest.mark.parametrize("status", [408, 500, 502, 503])
def test_server_errors_are_retryable(llm: llmplex.Client, local_api: FakeAPI, status: int) -> None:
    local_api.reply(CHAT, fx.server_error(status), status=status)

    with pytest.raises(llmplex.LLMServerError) as caught:
        llm.complete("local:m", "hi")

    assert caught.value.status_code == status
    assert caught.value.retryable


@pytest.mark.parametrize("status", [401, 403])
def test_authentication_failures_point_at_the_key(llm: llmplex.Client, openai_api: FakeAPI, status: int) -> None:
    openai_api.reply(RESPONSES, fx.error_body("Incorrect API key provided.", "invalid_request_error"), status=status)

    with pytest.raises(llmplex.LLMAuthenticationError, match="api_key") as caught:
        llm.complete("openai:gpt-4o-mini", "hi")

    assert isinstance(caught.value, llmplex.LLMConfigurationError)
    assert caught.value.status_code == status
    assert not caught.value.retryable
    assert "sk-test" not in str(caught.value)


def test_timeout_and_connection_errors(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.fail(CHAT, httpx.ReadTimeout("slow"))
    with pytest.raises(llmplex.LLMTimeoutError) as timed_out:
        llm.complete("local:m", "hi")
    assert isinstance(timed_out.value.__cause__, openai.APITimeoutError)

    local_api.fail(CHAT, httpx.ConnectError("refused"))
    with pytest.raises(llmplex.LLMConnectionError) as refused:
        llm.complete("local:m", "hi")
    assert isinstance(refused.value.__cause__, openai.APIConnectionError)


def test_malformed_body_is_a_server_error(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.raw(
        "POST", CHAT, httpx.Response(200, content=b'{"id": "x", "choi', headers={"content-type": "application/json"})
    )

    with pytest.raises(llmplex.LLMServerError, match="not valid JSON"):
        llm.complete("local:m", "hi")


def test_answer_that_is_not_a_completion_is_a_server_error(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.raw("POST", CHAT, httpx.Response(200, json={"object": "list", "data": []}))

    with pytest.raises(llmplex.LLMServerError, match="not a chat completion"):
        llm.complete("local:m", "hi")


def test_error_inside_a_chat_stream(llm: llmplex.Client, local_api: FakeAPI) -> None:
    local_api.stream(
        CHAT, [*fx.chat_stream_text(["Hel"], usage=None)[:2], fx.error_body("Overloaded", "server_error")], done=False
    )

    with pytest.raises(llmplex.LLMServerError, match="Overloaded"):
        list(llm.stream("local:m", "hi"))


def test_retries_happen_once_in_core_not_in_the_sdk(local_api: FakeAPI) -> None:
    local_api.reply(CHAT, fx.server_error(503), status=503)
    local_api.reply(CHAT, fx.chat_completion("finally"))
    llm = llmplex.Client(providers={"local": LOCAL_PROVIDER}, throttle={"max_attempts": 3, "base_delay": 0})

    response = llm.complete("local:m", "hi")

    assert (response.text, response.attempts) == ("finally", 2)
    assert len(local_api.requests) == 2


async def test_sdk_clients_never_retry(llm: llmplex.Client) -> None:
    assert llm.provider_client("local").max_retries == 0
    assert llm.provider_client("local", asynchronous=True).max_retries == 0


# --- the classifier on every SDK exception class ---------------------------------------

_REQUEST = httpx.Request("POST", "https://api.openai.com/v1/responses")


def _status_error(cls: type[openai.APIStatusError], status: int, body: dict[str, object]) -> openai.APIStatusError:
    response = httpx.Response(status, json=body, request=_REQUEST, headers={"x-request-id": "req_1"})
    return cls(f"Error code: {status}", response=response, body=body["error"])


def _completion(text: str) -> object:
    return openai.types.chat.ChatCompletion.model_validate(fx.chat_completion_truncated(text))


BAD = fx.error_body("Invalid value for 'model'.", "invalid_request_error", "model")
SDK_ERRORS: list[tuple[BaseException, type[llmplex.LLMError]]] = [
    (_status_error(openai.BadRequestError, 400, BAD), llmplex.LLMBadRequestError),
    (_status_error(openai.AuthenticationError, 401, BAD), llmplex.LLMAuthenticationError),
    (_status_error(openai.PermissionDeniedError, 403, BAD), llmplex.LLMAuthenticationError),
    (_status_error(openai.NotFoundError, 404, BAD), llmplex.LLMBadRequestError),
    (_status_error(openai.ConflictError, 409, BAD), llmplex.LLMBadRequestError),
    (_status_error(openai.UnprocessableEntityError, 422, BAD), llmplex.LLMBadRequestError),
    (_status_error(openai.RateLimitError, 429, fx.rate_limit_error()), llmplex.LLMRateLimitError),
    (_status_error(openai.RateLimitError, 429, fx.insufficient_quota_error()), llmplex.LLMQuotaExhaustedError),
    (_status_error(openai.InternalServerError, 500, fx.server_error()), llmplex.LLMServerError),
    (_status_error(openai.APIStatusError, 418, BAD), llmplex.LLMBadRequestError),
    (openai.APITimeoutError(request=_REQUEST), llmplex.LLMTimeoutError),
    (openai.APIConnectionError(request=_REQUEST), llmplex.LLMConnectionError),
    (
        openai.APIResponseValidationError(httpx.Response(200, json={}, request=_REQUEST), body={}),
        llmplex.LLMServerError,
    ),
    (openai.APIError("stream broke", _REQUEST, body={"message": "x", "type": "server_error"}), llmplex.LLMServerError),
    (openai.LengthFinishReasonError(completion=_completion("cut")), llmplex.LLMIncompleteError),  # type: ignore[arg-type]
    (openai.ContentFilterFinishReasonError(), llmplex.LLMRefusalError),
    (openai.OpenAIError("Missing credentials."), llmplex.LLMConfigurationError),
    (openai.InvalidWebhookSignatureError("bad signature"), llmplex.LLMConfigurationError),
    (json.JSONDecodeError("Expecting value", "{", 1), llmplex.LLMServerError),
]
if hasattr(openai, "WebSocketConnectionClosedError"):  # newer than openai 2.0 (tox env sdk-openai-lowest)
    SDK_ERRORS += [
        (openai.WebSocketConnectionClosedError("closed", unsent_messages=[]), llmplex.LLMConnectionError),
        (openai.WebSocketQueueFullError("full"), llmplex.LLMConnectionError),
    ]


@pytest.mark.parametrize(("error", "expected"), SDK_ERRORS, ids=[type(e).__name__ for e, _ in SDK_ERRORS])
def test_every_sdk_exception_maps_to_the_taxonomy(error: BaseException, expected: type[llmplex.LLMError]) -> None:
    classified = classify_error(error)

    assert type(classified) is expected
    assert classified.__cause__ is error


def test_status_errors_keep_request_id_and_body() -> None:
    classified = classify_error(_status_error(openai.BadRequestError, 400, BAD))

    assert isinstance(classified, llmplex.LLMBadRequestError)
    assert (classified.status_code, classified.request_id) == (400, "req_1")
    assert classified.response_body == BAD["error"]
    assert "Invalid value for 'model'" in str(classified)


def test_length_finish_error_keeps_the_partial_text() -> None:
    classified = classify_error(openai.LengthFinishReasonError(completion=_completion('{"a": 1')))  # type: ignore[arg-type]

    assert isinstance(classified, llmplex.LLMIncompleteError)
    assert classified.partial_text == '{"a": 1'


def test_unknown_and_already_typed_exceptions_are_left_to_core() -> None:
    assert classify_error(RuntimeError("boom")) is None
    assert classify_error(llmplex.LLMRefusalError("no", refusal="no")) is None


def test_a_4xx_the_server_asks_to_retry_is_retryable() -> None:
    response = httpx.Response(
        409, json=BAD, request=_REQUEST, headers={"x-should-retry": "true", "retry-after-ms": "20"}
    )

    classified = classify_error(openai.ConflictError("Error code: 409", response=response, body=BAD["error"]))

    assert isinstance(classified, llmplex.LLMServerError)
    assert (classified.status_code, classified.retry_after) == (409, 0.02)
