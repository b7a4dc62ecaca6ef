"""google-genai SDK exceptions → the llmplex error taxonomy."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from google.genai import errors

from llmplex.errors import (
    LLMAPIError,
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMServerError,
)

__all__ = ["classify_error"]

_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")
_KEPT_HEADERS = ("retry-after", "retry-after-ms", "x-goog-request-id", "server-timing")
_AUTH_STATUSES = frozenset({"UNAUTHENTICATED", "PERMISSION_DENIED"})
_STATUS_HINTS = {
    "INVALID_ARGUMENT": "check the request options and the model name",
    "PERMISSION_DENIED": "the API key may not use this model or project",
    "UNAUTHENTICATED": "the API key was rejected: check GEMINI_API_KEY",
    "NOT_FOUND": "not found: check the model name",
}


def _error_object(details: Any) -> Mapping[str, Any]:
    if isinstance(details, Mapping):
        inner = details.get("error", details)
        return inner if isinstance(inner, Mapping) else {}
    return {}


def _detail_entries(details: Any) -> list[Mapping[str, Any]]:
    entries = _error_object(details).get("details")
    return [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []


_Waiting = TypeVar("_Waiting", LLMRateLimitError, LLMServerError)


def _with_requested_wait(error: _Waiting, details: Any) -> _Waiting:
    """``retry_after`` from ``RetryInfo.retryDelay`` (``"37s"``) when the body has one; else the error already
    took it from the ``Retry-After`` header."""
    for entry in _detail_entries(details):
        if entry.get("@type") == _RETRY_INFO:
            match = _DURATION.match(str(entry.get("retryDelay", "")))
            if match:
                error.retry_after = float(match.group(1))
                return error
    return error


def _reason(details: Any) -> str | None:
    for entry in _detail_entries(details):
        if entry.get("@type") == _ERROR_INFO and entry.get("reason"):
            return str(entry["reason"])
    return None


def _is_authentication(code: int, status: str | None, reason: str | None) -> bool:
    """401/403, or the 400 ``INVALID_ARGUMENT`` Gemini answers for a bad key (reason ``API_KEY_INVALID``)."""
    return code in (401, 403) or status in _AUTH_STATUSES or (reason or "").startswith("API_KEY_")


def classify_error(error: BaseException) -> LLMError | None:
    """The taxonomy error for an SDK ``APIError``; ``None`` for anything else.

    httpx2 timeouts and connection failures reach core's fallback classifier as they are.
    """
    if isinstance(error, errors.UnknownApiResponseError):
        return LLMServerError(f"Gemini answered with a body the SDK could not read: {error}", cause=error)
    if not isinstance(error, errors.APIError):
        return None
    code = int(error.code or 0)
    status = error.status
    response = getattr(error, "response", None)
    headers: Mapping[str, str] = getattr(response, "headers", None) or {}
    context = {"status": status, "reason": _reason(error.details)}
    common: dict[str, Any] = {
        "status_code": code or None,
        "response_body": error.details,
        "headers": {k: v for k, v in headers.items() if k.lower() in _KEPT_HEADERS},
        "cause": error,
        "context": context,
    }
    described = f"Gemini API error {code} ({status or 'no status'}): {error.message or error.details}"
    if code == 429 or status == "RESOURCE_EXHAUSTED":
        return _with_requested_wait(LLMRateLimitError(described, **common), error.details)
    if "billing" in (error.message or "").lower():
        return LLMQuotaExhaustedError(f"{described}; check the billing of the Google Cloud project", **common)
    if code == 499 or status == "CANCELLED":
        return LLMConnectionError(f"{described} (the request was cancelled)", cause=error, context=context)
    if code == 408 or (code >= 500 and code != 501):
        return _with_requested_wait(LLMServerError(described, **common), error.details)
    if isinstance(error, errors.ClientError) or code == 501:
        if _is_authentication(code, status, context["reason"]):
            rejected = _STATUS_HINTS["PERMISSION_DENIED" if status == "PERMISSION_DENIED" else "UNAUTHENTICATED"]
            return LLMAuthenticationError(f"{described}; {rejected}", **common)
        hint = _STATUS_HINTS.get(status or "")
        return LLMBadRequestError(f"{described}; {hint}" if hint else described, **common)
    return LLMAPIError(described, **common)
