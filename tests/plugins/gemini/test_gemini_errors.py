"""google-genai SDK failures (``errors.APIError`` and its client/server subclasses) → the llmplex taxonomy."""

from __future__ import annotations

import httpx2
import pytest

import llmplex
from llmplex.errors import (
    LLMAPIError,
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
)
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http
from tests.plugins.gemini.wire import MODEL, error_body, response, text_part

__all__ = ["fake_http"]

KEY = "AIzaSyTESTKEY_0123456789abcdefghij"
QUOTA_DETAILS = [
    {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [
            {
                "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                "quotaValue": "10",
            }
        ],
    },
    {
        "@type": "type.googleapis.com/google.rpc.Help",
        "links": [{"description": "Learn more", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}],
    },
    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"},
]


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    return llmplex.Client(throttle={"max_attempts": 1})


CASES = [
    (400, "INVALID_ARGUMENT", "Request contains an invalid argument.", LLMBadRequestError, False),
    (
        400,
        "FAILED_PRECONDITION",
        "Gemini API free tier is not available in your country. Please enable billing "
        "on your project in Google AI Studio.",
        LLMQuotaExhaustedError,
        False,
    ),
    (403, "PERMISSION_DENIED", "Your API key doesn't have the required permissions.", LLMAuthenticationError, False),
    (404, "NOT_FOUND", "models/gemini-9 is not found for API version v1beta.", LLMBadRequestError, False),
    (429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", LLMRateLimitError, True),
    (500, "INTERNAL", "An internal error has occurred.", LLMServerError, True),
    (501, "UNIMPLEMENTED", "Method not implemented.", LLMBadRequestError, False),
    (503, "UNAVAILABLE", "The model is overloaded. Please try again later.", LLMServerError, True),
    (504, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete.", LLMServerError, True),
]


@pytest.mark.parametrize(("code", "status", "text", "expected", "retryable"), CASES)
def test_status_errors(
    llm: llmplex.Client,
    fake_http: FakeHTTP,
    code: int,
    status: str,
    text: str,
    expected: type[LLMError],
    retryable: bool,
) -> None:
    body = error_body(code, status, text)
    fake_http.reply(code, json_body=body)
    with pytest.raises(expected) as caught:
        llm.complete(f"gemini:{MODEL}", "Hi")
    error = caught.value
    assert type(error) is expected
    assert error.retryable is retryable
    assert error.provider == "gemini"
    assert error.context["status"] == status
    assert text in str(error)
    assert KEY not in str(error) and KEY not in repr(error)
    assert isinstance(error, LLMAPIError)
    assert error.status_code == code
    assert error.response_body == body


def test_a_rejected_key_is_an_authentication_error(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    """Gemini answers a bad key with 400 INVALID_ARGUMENT and ErrorInfo reason API_KEY_INVALID."""
    details = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID",
            "domain": "googleapis.com",
            "metadata": {"service": "generativelanguage.googleapis.com"},
        }
    ]
    fake_http.reply(400, json_body=error_body(400, "INVALID_ARGUMENT", "API key not valid.", details))
    with pytest.raises(LLMAuthenticationError, match="check GEMINI_API_KEY") as caught:
        llm.complete(f"gemini:{MODEL}", "Hi")
    assert isinstance(caught.value, llmplex.LLMConfigurationError)
    assert (caught.value.status_code, caught.value.retryable) == (400, False)


def test_resource_exhausted_keeps_the_retry_delay_and_quota_details(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    body = error_body(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", QUOTA_DETAILS)
    fake_http.reply(429, json_body=body)
    with pytest.raises(LLMRateLimitError) as caught:
        llm.complete(f"gemini:{MODEL}", "Hi")
    assert caught.value.retry_after == 37.0
    assert caught.value.response_body == body


@pytest.mark.parametrize(("retry_after", "wait"), [("4", 4.0), ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0), ("soon", None)])
def test_retry_after_header_when_there_is_no_retry_info(
    llm: llmplex.Client, fake_http: FakeHTTP, retry_after: str, wait: float | None
) -> None:
    fake_http.reply(503, json_body=error_body(503, "UNAVAILABLE", "Overloaded."), headers={"retry-after": retry_after})
    with pytest.raises(LLMServerError) as caught:
        llm.complete(f"gemini:{MODEL}", "Hi")
    assert caught.value.retry_after == wait


def test_retry_after_ms_header_is_read(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    body = error_body(429, "RESOURCE_EXHAUSTED", "Slow down.")
    fake_http.reply(429, json_body=body, headers={"retry-after-ms": "1500"})
    with pytest.raises(LLMRateLimitError) as caught:
        llm.complete(f"gemini:{MODEL}", "Hi")
    assert caught.value.retry_after == 1.5


def test_server_errors_are_retried_by_core(monkeypatch: pytest.MonkeyPatch, fake_http: FakeHTTP) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    llm = llmplex.Client(throttle={"max_attempts": 2, "base_delay": 0, "max_delay": 0})
    fake_http.reply(503, json_body=error_body(503, "UNAVAILABLE", "The model is overloaded."))
    fake_http.reply(json_body=response([text_part("ok")]))
    answer = llm.complete(f"gemini:{MODEL}", "Hi")
    assert answer.attempts == 2
    assert len(fake_http.sent) == 2


async def test_async_errors_are_classified_the_same(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(429, json_body=error_body(429, "RESOURCE_EXHAUSTED", "Slow down.", QUOTA_DETAILS))
    with pytest.raises(LLMRateLimitError) as caught:
        await llm.acomplete(f"gemini:{MODEL}", "Hi")
    assert caught.value.retry_after == 37.0


def test_stream_errors_are_classified(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(500, json_body=error_body(500, "INTERNAL", "An internal error has occurred."))
    with pytest.raises(LLMServerError):
        list(llm.stream(f"gemini:{MODEL}", "Hi"))


def test_connection_refused(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.fail(httpx2.ConnectError("connection refused"))
    with pytest.raises(LLMConnectionError):
        llm.complete(f"gemini:{MODEL}", "Hi")


async def test_read_timeout(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.fail(httpx2.ReadTimeout("timed out"))
    with pytest.raises(LLMTimeoutError):
        await llm.acomplete(f"gemini:{MODEL}", "Hi")


def test_non_json_error_body(llm: llmplex.Client, fake_http: FakeHTTP) -> None:
    fake_http.reply(502, text="<html>Bad Gateway</html>", content_type="text/html")
    with pytest.raises(LLMServerError, match="Bad Gateway"):
        llm.complete(f"gemini:{MODEL}", "Hi")


def test_foreign_exceptions_are_left_to_core() -> None:
    from llmplex_gemini.errors import classify_error

    assert classify_error(ValueError("not ours")) is None
