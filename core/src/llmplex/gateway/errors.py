"""What a failed gateway request answers: one ``GatewayError``, shaped as the API the client speaks.

Every failure, the gateway's own (a malformed body, a missing key) and the
provider's (an ``LLMError`` after core's retries and fallbacks), becomes a
``GatewayError`` with the HTTP status its meaning has, written either in the
OpenAI error shape (``{"error": {"message", "type", "param", "code"}}``) or the
Anthropic one (``{"type": "error", "error": {"type", "message"}}``), so that
each official SDK raises the exception class it raises for the real API.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from llmplex.errors import (
    LLMAPIError,
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMBudgetExceededError,
    LLMConfigurationError,
    LLMConnectionError,
    LLMError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
)
from llmplex.masking.values import redact

__all__ = ["Dialect", "GatewayError", "from_llm_error", "is_context_overflow"]

Dialect = Literal["openai", "anthropic"]

_OVERFLOW_MARKS = (
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "prompt is too long",
    "too many tokens",
    "exceeds the context",
    "input is too long",
)

# the Anthropic error type of each status the gateway answers with
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "request_too_large",
    429: "rate_limit_error",
    502: "api_error",
    503: "overloaded_error",
    504: "timeout_error",
}
_OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
}


@dataclass
class GatewayError(Exception):
    """A request the gateway answers with an error: ``status``, a message for people, and the API's codes.

    ``param`` names the offending field (OpenAI's ``param``), ``code`` the machine-readable
    reason (``context_length_exceeded``, ``rate_limit_exceeded``, ``invalid_api_key``),
    ``retry_after`` sets the ``Retry-After`` header (seconds), and ``kind`` is the
    error type the metrics and the request log count; ``provider`` and ``model`` name the failed provider call.
    """

    status: int
    message: str
    param: str | None = None
    code: str | None = None
    retry_after: float | None = None
    kind: str = "invalid_request"
    headers: dict[str, str] = field(default_factory=dict)
    provider: str | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        self.message = redact(self.message)
        super().__init__(self.message)

    def response_headers(self) -> dict[str, str]:
        """The headers the error response carries (``Retry-After`` in whole seconds, rounded up)."""
        headers = dict(self.headers)
        if self.retry_after is not None and math.isfinite(self.retry_after):
            headers["retry-after"] = str(max(0, math.ceil(self.retry_after)))
        return headers

    def body(self, dialect: Dialect) -> dict[str, Any]:
        """The error as the JSON body of ``dialect``'s API."""
        if dialect == "anthropic":
            kind = _ANTHROPIC_TYPES.get(self.status, "api_error" if self.status >= 500 else "invalid_request_error")
            return {"type": "error", "error": {"type": kind, "message": self.message}}
        kind = _OPENAI_TYPES.get(self.status, "server_error" if self.status >= 500 else "invalid_request_error")
        if self.code == "insufficient_quota":
            kind = "insufficient_quota"
        return {"error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}}


def is_context_overflow(error: LLMError) -> bool:
    """Whether a provider refused the request because the prompt does not fit the model's context window."""
    if not isinstance(error, LLMBadRequestError):
        return False
    body = error.response_body
    found = f"{error.message} {body!r}".lower()
    return any(mark in found for mark in _OVERFLOW_MARKS)


def from_llm_error(error: LLMError, dialect: Dialect) -> GatewayError:
    """The gateway's answer to a call that failed with ``error``, keeping its meaning for the client."""
    where = ":".join(p for p in (error.provider, error.model) if p)
    upstream = f"upstream {where}: " if where else "upstream: "
    if isinstance(error, LLMAuthenticationError):
        return GatewayError(
            502, f"{upstream}the gateway's credentials for this provider were refused", kind="upstream_auth"
        )
    if isinstance(error, LLMQuotaExhaustedError):
        return GatewayError(429, upstream + error.message, code="insufficient_quota", kind="quota")
    if isinstance(error, LLMRateLimitError):
        return GatewayError(
            429, upstream + error.message, code="rate_limit_exceeded", retry_after=error.retry_after, kind="rate_limit"
        )
    if isinstance(error, LLMBudgetExceededError):
        return GatewayError(429, f"budget spent: {error.message}", code="budget_exceeded", kind="budget")
    if isinstance(error, LLMTimeoutError):  # the deadline too
        return GatewayError(504, upstream + f"timed out: {error.message}", code="timeout", kind="timeout")
    if isinstance(error, (LLMServerError, LLMConnectionError)):
        status = 503 if isinstance(error, LLMServerError) and error.status_code in (503, 529) else 502
        return GatewayError(status, upstream + error.message, code="upstream_error", kind="upstream")
    if isinstance(error, LLMBadRequestError):
        if is_context_overflow(error):
            return _overflow(error, dialect)
        status = error.status_code if error.status_code in (400, 404, 413, 422) else 400
        return GatewayError(status, upstream + error.message, kind="bad_request")
    if isinstance(error, LLMAPIError):
        return GatewayError(502, upstream + error.message, code="upstream_error", kind="upstream")
    if isinstance(error, LLMConfigurationError):
        return GatewayError(400, error.message, kind="invalid_request")
    return GatewayError(502, upstream + error.message, code="upstream_error", kind=type(error).__name__)


def _overflow(error: LLMBadRequestError, dialect: Dialect) -> GatewayError:
    """A context-window overflow, worded the way each API (and the SDKs and agents reading it) recognizes."""
    if dialect == "anthropic":
        message = f"prompt is too long: {error.message}"
    else:
        message = f"This model's maximum context length was exceeded: {error.message}"
    return GatewayError(400, message, param="messages", code="context_length_exceeded", kind="context_overflow")
