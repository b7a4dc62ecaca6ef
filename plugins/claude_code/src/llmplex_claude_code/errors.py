"""The plugin's failures (and an ``is_error`` result's status) → the core taxonomy."""

from __future__ import annotations

from typing import Any

from llmplex.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConfigurationError,
    LLMConnectionError,
    LLMError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMServerError,
    LLMSubprocessError,
    LLMTimeoutError,
)
from llmplex_claude_code.failures import CLIExitError, CLIOutputError, CLIResultError, CLITimeoutError

__all__ = ["classify_error"]

_LOGIN_HINT = (
    "log the CLI in (run `claude`, then /login, or `claude setup-token`), or set api_key in "
    "the claude-code provider's config table, or ANTHROPIC_API_KEY"
)
_AUTH_MARKERS = ("not logged in", "/login", "invalid api key", "failed to authenticate", "authentication")
_QUOTA_MARKERS = ("credit balance", "usage limit", "billing", "quota")


def _from_result(error: CLIResultError) -> LLMError:
    result = error.result
    message = str(result.get("result") or result.get("subtype") or "the CLI reported an error")
    status = result.get("api_error_status")
    status = status if isinstance(status, int) else None
    lowered = message.lower()
    fields: dict[str, Any] = {
        "status_code": status,
        "response_body": result.get("result"),
        "request_id": result.get("session_id"),
        "context": {"subtype": result.get("subtype"), "return_code": error.return_code},
        "cause": error,
    }
    if status in (401, 403):
        return LLMAuthenticationError(f"the claude CLI is not authenticated ({message}); {_LOGIN_HINT}", **fields)
    if status is None and any(m in lowered for m in _AUTH_MARKERS):  # the CLI's own login check: no API status
        return LLMConfigurationError(f"the claude CLI is not authenticated ({message}); {_LOGIN_HINT}", cause=error)
    if any(m in lowered for m in _QUOTA_MARKERS) and status in (None, 400, 402, 429):
        return LLMQuotaExhaustedError(f"{message} (retrying will not help)", **fields)
    if status == 429:
        return LLMRateLimitError(message, **fields)
    if status is not None and (status >= 500 or status == 408):
        return LLMServerError(message, **fields)
    if status is not None and status >= 400:
        return LLMBadRequestError(message, **fields)
    if status is None and "connection error" in lowered:
        return LLMConnectionError(f"the claude CLI could not reach the API: {message}", cause=error)
    if status is None and "timed out" in lowered:
        return LLMTimeoutError(f"the claude CLI's API request timed out: {message}", cause=error)
    return LLMSubprocessError(
        f"the claude CLI failed ({result.get('subtype')}): {message}",
        return_code=error.return_code,
        stderr=error.stderr,
        cause=error,
        context={"subtype": result.get("subtype")},
    )


def classify_error(error: BaseException) -> LLMError | None:
    """The core error for a CLI failure; ``None`` for anything else."""
    if isinstance(error, LLMError):
        return error
    if isinstance(error, CLITimeoutError):
        return LLMTimeoutError(str(error), cause=error)
    if isinstance(error, CLIResultError):
        return _from_result(error)
    if isinstance(error, (CLIExitError, CLIOutputError)):
        return LLMSubprocessError(str(error), return_code=error.return_code, stderr=error.stderr, cause=error)
    return None
