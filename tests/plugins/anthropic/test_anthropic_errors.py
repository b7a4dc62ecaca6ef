"""Every anthropic SDK failure becomes the right llmplex error, with the provider's facts kept."""

from __future__ import annotations

import httpx2
import pytest

import llmplex
from llmplex.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
)
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http, sse
from tests.plugins.anthropic.wire import MODEL, error_body, message

__all__ = ["fake_http"]

KEY = "sk-ant-test-secret-key-123456"
REQUEST_ID = "req_011CSHoEeqs5C35K2UUqR7Fy"


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return llmplex.Client(throttle={"max_attempts": 1})


# status, error.type, expected class, retryable — the documented error table plus SDK-only statuses
CASES = [
    (400, "invalid_request_error", LLMBadRequestError, False),
    (401, "authentication_error", LLMAuthenticationError, False),
    (402, "billing_error", LLMQuotaExhaustedError, False),
    (403, "permission_error", LLMAuthenticationError, False),
    (404, "not_found_error", LLMBadRequestError, False),
    (408, "timeout_error", LLMServerError, True),
    (408, "invalid_request_error", LLMServerError, True),
    (409, "conflict_error", LLMBadRequestError, False),
    (412, "memory_precondition_failed_error", LLMBadRequestError, False),
    (413, "request_too_large", LLMBadRequestError, False),
    (422, "invalid_request_error", LLMBadRequestError, False),
    (429, "rate_limit_error", LLMRateLimitError, True),
    (431, "invalid_request_error", LLMBadRequestError, False),
    (499, "api_error", LLMServerError, True),
    (500, "api_error", LLMServerError, True),
    (501, "invalid_request_error", LLMBadRequestError, False),
    (503, "api_error", LLMServerError, True),
    (504, "timeout_error", LLMServerError, True),
    (529, "overloaded_error", LLMServerError, True),
]


@pytest.mark.parametrize(("status", "error_type", "expected", "retryable"), CASES)
def test_status_errors(
    llm: llmplex.Client,
    fake_http: FakeHTTP,
    status: int,
    error_type: str,
    expected: type[LLMError],
    retryable: bool,
) -> None:
    body = error_body(error_type, f"something about {error_type}", REQUEST_ID)
    fake_http.reply(status, json_body=body, headers={"request-id": REQUEST_ID})
    with pytest.raises(expected) as caught:
        llm.complete(f"anthropic:{MODEL}", "Hi")
    error = caught.value
    assert type(error) is expected
    assert error.retryable is retryable
    assert error.provider == "anthropic"
    assert error.model == MODEL
    assert error.context["error_type"] == error_type
    assert error.context["request_id"] == REQUEST_ID
    assert f"something about {error_type}" in str(error)
    assert KEY not in str(error) and KEY not in repr(error)
    if isinstance(error, llmplex.LLMAPIError):
        assert error.status_code == status
        assert error.request_id == REQUEST_ID
        assert error.response_body == body


def test_billing_error_type_is_quota_exhausted_whatever_the_status(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(400, json_body=error_body("billing_error", "Your credit balance is too low."))
    with pytest.raises(LLMQuotaExhaustedError, match="credit balance"):
        llm.complete(f"anthropic:{MODEL}", "Hi")


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"retry-after": "17"}, 17.0),
        ({"retry-after-ms": "1500", "retry-after": "2"}, 1.5),
        ({"retry-after": "Thu, 01 Jan 1970 00:00:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_rate_limit_keeps_the_requested_wait(
    llm: llmplex.Client, fake_http: FakeHTTP, headers: dict[str, str], wait: float | None
) -> None:
    limits = {"anthropic-ratelimit-requests-remaining": "0", **headers}
    fake_http.reply(
        429,
        json_body=error_body("rate_limit_error", "Number of requests has exceeded your rate limit."),
        headers=limits,
    )
    with pytest.raises(LLMRateLimitError) as caught:
        llm.complete(f"anthropic:{MODEL}", "Hi")
    assert caught.value.retry_after == wait
    assert caught.value.headers["anthropic-ratelimit-requests-remaining"] == "0"


def test_overloaded_is_retried_by_core_once_per_attempt(monkeypatch: pytest.MonkeyPatch, fake_http: FakeHTTP) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    llm = llmplex.Client(throttle={"max_attempts": 2, "base_delay": 0, "max_delay": 0})
    fake_http.reply(529, json_body=error_body("overloaded_error", "Overloaded"))
    fake_http.reply(json_body=message())
    response = llm.complete(f"anthropic:{MODEL}", "Hi")
    assert response.attempts == 2
    assert len(fake_http.sent) == 2


def test_error_event_in_the_middle_of_a_stream(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply_stream(
        sse([("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})])
    )
    with pytest.raises(LLMServerError, match="Overloaded") as caught:
        list(llm.stream(f"anthropic:{MODEL}", "Hi"))
    assert caught.value.context["error_type"] == "overloaded_error"


def test_connection_refused(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.fail(httpx2.ConnectError("connection refused"))
    with pytest.raises(LLMConnectionError) as caught:
        llm.complete(f"anthropic:{MODEL}", "Hi")
    assert caught.value.retryable


async def test_read_timeout(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.fail(httpx2.ReadTimeout("timed out"))
    with pytest.raises(LLMTimeoutError) as caught:
        await llm.acomplete(f"anthropic:{MODEL}", "Hi")
    assert caught.value.retryable


def test_client_closed_request_without_a_server_type_is_a_connection_error(
    llm: llmplex.Client, fake_http: FakeHTTP
) -> None:
    fake_http.reply(499, json_body=error_body("invalid_request_error", "Client closed request"))
    with pytest.raises(LLMConnectionError, match="closed"):
        llm.complete(f"anthropic:{MODEL}", "Hi")


def test_non_json_error_body_is_kept_as_text(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(502, text="<html>Bad Gateway</html>", content_type="text/html")
    with pytest.raises(LLMServerError) as caught:
        llm.complete(f"anthropic:{MODEL}", "Hi")
    assert caught.value.response_body == "<html>Bad Gateway</html>"


def test_foreign_exceptions_are_left_to_core() -> None:
    from llmplex_anthropic.errors import classify_error

    assert classify_error(ValueError("not ours")) is None


def test_response_the_sdk_cannot_validate_is_an_api_error() -> None:
    import anthropic
    from llmplex_anthropic.errors import classify_error

    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    error = anthropic.APIResponseValidationError(httpx2.Response(200, request=request), body={"type": "nonsense"})
    classified = classify_error(error)
    assert type(classified) is llmplex.LLMAPIError
    assert classified.status_code == 200
    assert classified.response_body == {"type": "nonsense"}
    assert not classified.retryable
