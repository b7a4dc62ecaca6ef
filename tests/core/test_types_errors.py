"""Core types and the error taxonomy."""

from __future__ import annotations

import pytest

from llmplex import errors
from llmplex.masking.values import register_secret
from llmplex.types import Message, Response, Usage

# a model group with every deployment cooling or at its limit comes back after retry_after: a rate limit of its own
RETRYABLE = {
    errors.LLMRateLimitError,
    errors.LLMGroupUnavailableError,
    errors.LLMServerError,
    errors.LLMConnectionError,
    errors.LLMTimeoutError,
}


@pytest.mark.parametrize("cls", [getattr(errors, name) for name in errors.__all__])
def test_retryable_is_true_exactly_for_transient_failures(cls: type[errors.LLMError]) -> None:
    assert cls.retryable is (cls in RETRYABLE)
    assert issubclass(cls, errors.LLMError)


def test_taxonomy_shape() -> None:
    api_errors = [
        errors.LLMRateLimitError,
        errors.LLMQuotaExhaustedError,
        errors.LLMServerError,
        errors.LLMBadRequestError,
    ]
    assert all(issubclass(c, errors.LLMAPIError) for c in api_errors)
    assert issubclass(errors.LLMQuotaExhaustedError, errors.LLMRateLimitError)  # issue 13: every 429 is a rate limit
    assert issubclass(errors.LLMDeadlineExceededError, errors.LLMTimeoutError)  # issue 13
    assert issubclass(errors.LLMAuthenticationError, (errors.LLMConfigurationError, errors.LLMAPIError))


def test_error_carries_context_and_cause() -> None:
    cause = ValueError("boom")
    error = errors.LLMRateLimitError(
        "slow down",
        provider="openai",
        model="gpt",
        status_code=429,
        retry_after=2.5,
        cause=cause,
        headers={"Authorization": "Bearer abc", "x-request-id": "req_1"},
        request_id="req_1",
    )
    assert str(error) == "[openai:gpt] slow down"
    assert error.__cause__ is cause and error.retry_after == 2.5 and error.status_code == 429
    assert error.headers == {"x-request-id": "req_1"}
    assert "retryable=True" in repr(error)


def test_secrets_are_redacted_from_messages_and_bodies() -> None:
    register_secret("my-registered-secret")
    error = errors.LLMBadRequestError(
        "bad key sk-proj-ABCDEFGHIJKLMNOP and my-registered-secret",
        response_body={"error": {"message": "key my-registered-secret invalid"}, "api_key": "x"},
    )
    assert "ABCDEFGHIJKLMNOP" not in str(error) and "my-registered-secret" not in str(error)
    assert error.response_body == {"error": {"message": "key *** invalid"}, "api_key": "***"}
    sub = errors.LLMSubprocessError("failed", return_code=1, stderr="token: Bearer abcdefghijkl")
    assert "abcdefghijkl" not in sub.stderr


def test_usage_total_defaults_to_sum_and_adds() -> None:
    usage = Usage(input_tokens=3, output_tokens=4)
    assert usage.total_tokens == 7
    assert (usage + Usage(input_tokens=2, output_tokens=1, cached_tokens=2)).model_dump() == {
        "input_tokens": 5,
        "output_tokens": 5,
        "total_tokens": 10,
        "cached_tokens": 2,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
        "cache_write_1h_tokens": 0,
        "input_audio_tokens": 0,
        "cached_audio_tokens": 0,
        "output_audio_tokens": 0,
        "tool_prompt_tokens": 0,
        "reported": True,
        "cost_usd": None,
        "cost_note": (
            "no price: this usage was not priced as a model genai-prices knows (the mock provider, a third-party "
            "plugin, or a usage made by hand)"
        ),
    }


def test_response_repr_and_dump_leave_out_raw_payload() -> None:
    response = Response(text="hi", raw={"secret": "RAWPAYLOAD"})
    assert "RAWPAYLOAD" not in repr(response)
    assert "raw" not in response.model_dump()
    assert response.message() == Message(role="assistant", content="hi")


def test_values_are_frozen() -> None:
    with pytest.raises(Exception, match="frozen"):
        Message.user("x").content = "y"  # type: ignore[misc]


def test_placeholder_keys_are_not_masked_everywhere() -> None:
    register_secret("test")
    error = errors.LLMConfigurationError("config file /tmp/pytest-of-root/test_x/llmplex.toml is not valid TOML")
    assert "pytest-of-root/test_x" in str(error)
