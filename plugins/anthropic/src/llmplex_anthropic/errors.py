"""Anthropic SDK exceptions → the llmplex error taxonomy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anthropic

from llmplex.errors import (
    LLMAPIError,
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConfigurationError,
    LLMConnectionError,
    LLMError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
)

__all__ = ["classify_error", "error_from_result"]

_KEPT_HEADERS = ("request-id", "retry-after", "retry-after-ms", "anthropic-organization-id", "x-should-retry")
_KEPT_HEADER_PREFIXES = ("anthropic-ratelimit-",)
_SERVER_ERROR_TYPES = frozenset({"overloaded_error", "api_error", "timeout_error"})
_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""The HTTP status the API documents for each error ``type``."""
_STATUS_HINTS = {
    401: "the API key was rejected: check ANTHROPIC_API_KEY",
    403: "the API key may not use this resource",
    404: "not found: check the model name",
    413: "the request is too large: shorten the prompt or attachments",
}


def _kept_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in headers.items()
        if name.lower() in _KEPT_HEADERS or name.lower().startswith(_KEPT_HEADER_PREFIXES)
    }


def classify_error(error: BaseException) -> LLMError | None:
    """The taxonomy error for an SDK exception; ``None`` for anything else."""
    if isinstance(error, anthropic.APITimeoutError):
        return LLMTimeoutError("the Anthropic request timed out", cause=error)
    if isinstance(error, anthropic.APIConnectionError):
        return LLMConnectionError(f"could not reach the Anthropic API: {error.message}", cause=error)
    if isinstance(error, anthropic.APIStatusError):
        return _status_error(error)
    if isinstance(error, anthropic.APIResponseValidationError):
        return LLMAPIError(
            f"the Anthropic API answered with data the SDK could not read: {error.message}",
            status_code=error.status_code,
            response_body=error.body,
            cause=error,
        )
    if isinstance(error, anthropic.AnthropicError) and type(error).__name__.endswith("CredentialsError"):
        return LLMConfigurationError(f"Anthropic credentials could not be loaded: {error}", cause=error)
    return None


def _status_error(error: anthropic.APIStatusError) -> LLMError:
    status = error.status_code
    common: dict[str, Any] = {
        "status_code": status,
        "response_body": error.body,
        "request_id": error.request_id,
        "headers": _kept_headers(error.response.headers),
        "cause": error,
        "context": {"error_type": error.type, "error_code": error.error_code, "request_id": error.request_id},
    }
    detail = error.api_message or error.message
    described = f"Anthropic API error {status} ({error.type or 'unknown type'}): {detail}"
    return _typed(status, error.type, described, common)


def error_from_result(error_type: str | None, message: str, request_id: str | None = None) -> LLMError:
    """The taxonomy error for an error the API reports in a body without an HTTP status (a batch result).

    The documented status of its ``type`` decides, as it would for the same error answered over HTTP.
    """
    common: dict[str, Any] = {
        "request_id": request_id,
        "context": {"error_type": error_type, "request_id": request_id},
    }
    described = f"Anthropic API error ({error_type or 'unknown type'}): {message}"
    return _typed(_TYPE_STATUS.get(error_type or "", 400), error_type, described, common)


def _typed(status: int, error_type: str | None, described: str, common: dict[str, Any]) -> LLMError:
    if error_type == "billing_error" or status == 402:
        return LLMQuotaExhaustedError(f"{described}; check the plan and billing of the account", **common)
    if error_type == "rate_limit_error" or status == 429:
        return LLMRateLimitError(described, **common)
    if error_type in _SERVER_ERROR_TYPES or status == 408 or (status >= 500 and status != 501):
        return LLMServerError(described, **common)
    if status == 499:
        closed = f"{described} (the connection closed before the answer)"
        return LLMConnectionError(closed, cause=common.get("cause"), context=common["context"])
    hint = _STATUS_HINTS.get(status)
    kind = LLMAuthenticationError if status in (401, 403) else LLMBadRequestError
    return kind(f"{described}; {hint}" if hint else described, **common)
