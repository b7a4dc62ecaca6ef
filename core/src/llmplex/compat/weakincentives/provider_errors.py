"""weakincentives' module-level throttle helpers of its OpenAI and LiteLLM adapters, by the same names.

``_coerce_retry_after``, ``_retry_after_from_error``, ``_error_payload`` and
``_normalize_<provider>_throttle`` read a provider exception the way
weakincentives 0.18 did (``retry_after`` attribute, ``Retry-After`` headers on
the error or its response, ``insufficient_quota``, status 429, ``*RateLimit*``
and ``*Timeout*`` class names). llmplex's own retry loop classifies errors by
the same rules (``injection.classify``); these stay for code and tests that
call them by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from http import HTTPStatus
from typing import Any

from llmplex.compat.weakincentives.errors import (
    PROMPT_EVALUATION_PHASE_REQUEST,
    ThrottleDetails,
    ThrottleError,
    ThrottleKind,
)

__all__ = [
    "coerce_retry_after",
    "error_payload",
    "litellm_retry_after",
    "normalize_throttle",
    "openai_error_payload",
    "openai_retry_after",
    "throttle_details",
]

_RATE_LIMIT_CODES = frozenset({"rate_limit", "rate_limit_exceeded"})


def throttle_details(
    *,
    kind: ThrottleKind,
    retry_after: timedelta | None = None,
    attempts: int = 1,
    retry_safe: bool = True,
    provider_payload: dict[str, Any] | None = None,
) -> ThrottleDetails:
    """A ``ThrottleDetails`` from keyword arguments."""
    return ThrottleDetails(kind, retry_after, attempts, retry_safe, provider_payload)


def coerce_retry_after(value: object) -> timedelta | None:
    """A positive wait as a ``timedelta`` (from a ``timedelta``, seconds, or a string of digits), else ``None``."""
    if isinstance(value, timedelta):
        return value if value > timedelta(0) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return timedelta(seconds=float(value)) if value > 0 else None
    if isinstance(value, str) and value.isdigit():
        return timedelta(seconds=float(value))
    return None


def _from_headers(headers: object) -> timedelta | None:
    if not isinstance(headers, Mapping):
        return None
    return coerce_retry_after({str(k).lower(): v for k, v in headers.items()}.get("retry-after"))


def openai_retry_after(error: object) -> timedelta | None:
    """The wait an OpenAI error asks for: ``retry_after``, then ``Retry-After`` on it or its response."""
    found = coerce_retry_after(getattr(error, "retry_after", None)) or _from_headers(getattr(error, "headers", None))
    if found is not None:
        return found
    response = getattr(error, "response", None)
    if isinstance(response, Mapping):
        return _from_headers(response.get("headers")) or coerce_retry_after(response.get("retry_after"))
    return _from_headers(getattr(response, "headers", None)) if response is not None else None


def _litellm_header(headers: object) -> timedelta | None:
    if not isinstance(headers, Mapping):
        return None
    return coerce_retry_after(headers.get("retry-after") or headers.get("Retry-After"))


def litellm_retry_after(error: object) -> timedelta | None:
    """The wait a LiteLLM error asks for: ``retry_after``, its ``headers``, then its mapping ``response``."""
    found = coerce_retry_after(getattr(error, "retry_after", None)) or _litellm_header(getattr(error, "headers", None))
    if found is not None:
        return found
    response = getattr(error, "response", None)
    if isinstance(response, Mapping):
        return coerce_retry_after(response.get("retry_after")) or _litellm_header(response.get("headers"))
    return None


def error_payload(error: object) -> dict[str, Any] | None:
    """The error's ``response`` when it is a mapping (string keys), else ``None``."""
    response = getattr(error, "response", None)
    return {str(k): v for k, v in response.items()} if isinstance(response, Mapping) else None


def openai_error_payload(error: object) -> dict[str, Any] | None:
    """``error_payload``, else the error's ``json_body`` mapping (the OpenAI SDK's)."""
    found = error_payload(error)
    if found is not None:
        return found
    body = getattr(error, "json_body", None)
    return {str(k): v for k, v in body.items()} if isinstance(body, Mapping) else None


def _rate_limited(error: Exception, name: str, code: object) -> bool:
    return (
        getattr(error, "status_code", None) == HTTPStatus.TOO_MANY_REQUESTS
        or "ratelimit" in name
        or (code in _RATE_LIMIT_CODES)
    )


def normalize_throttle(
    error: Exception, *, prompt_name: str, provider: str, retry_after: timedelta | None, payload: dict[str, Any] | None
) -> ThrottleError | None:
    """``error`` as a ``ThrottleError`` when it is a quota, rate-limit or timeout error, else ``None``."""
    message = str(error) or f"{provider} request failed."
    code = getattr(error, "code", None)
    name = type(error).__name__.lower()
    kind: ThrottleKind | None = None
    if "insufficient_quota" in message.lower() or code == "insufficient_quota":
        kind = "quota_exhausted"
    elif _rate_limited(error, name, code):
        kind = "rate_limit"
    elif "timeout" in name:
        kind = "timeout"
    if kind is None:
        return None
    return ThrottleError(
        message,
        prompt_name=prompt_name,
        phase=PROMPT_EVALUATION_PHASE_REQUEST,
        details=throttle_details(kind=kind, retry_after=retry_after, provider_payload=payload),
    )
