"""The plugin's failures (and an ``is_error`` result's status) → the core taxonomy."""

from __future__ import annotations

from typing import Any

from llmplex.errors import (
    LLMConfigurationError,
    LLMConnectionError,
    LLMError,
    LLMQuotaExhaustedError,
    LLMSubprocessError,
    LLMTimeoutError,
)
from llmplex.http import error_for_status
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
        "request_id": result.get("session_id"),
        "context": {"subtype": result.get("subtype"), "return_code": error.return_code},
        "cause": error,
    }
    quota = any(m in lowered for m in _QUOTA_MARKERS)
    if status is not None and status >= 400:  # the API's answer, relayed: llmplex.http's status mapping
        return error_for_status(
            status,
            body=message,
            key_hint=_LOGIN_HINT,
            override=lambda _status, _body: LLMQuotaExhaustedError if quota and status in (400, 402, 429) else None,
            **fields,
        )
    if status is None and any(m in lowered for m in _AUTH_MARKERS):  # the CLI's own login check: no API status
        return LLMConfigurationError(f"the claude CLI is not authenticated ({message}); {_LOGIN_HINT}", cause=error)
    if status is None and quota:
        return LLMQuotaExhaustedError(f"{message} (retrying will not help)", **fields)
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
