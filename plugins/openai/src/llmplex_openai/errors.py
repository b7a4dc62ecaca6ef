"""Map every exception of the OpenAI SDK (and in-band API errors) to the core taxonomy.

``classify_error`` is the plain function behind the plugin's
``llmplex_classify_error``; ``error_from_api`` builds the error for an error
the API reports inside a 200 answer or a stream (``response.failed``, ``error`` events).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import openai

from llmplex.errors import (
    LLMAPIError,
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConfigurationError,
    LLMConnectionError,
    LLMError,
    LLMIncompleteError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMServerError,
    LLMTimeoutError,
)

__all__ = ["classify_error", "error_from_api"]

_CONTEXT_CODES = frozenset({"context_length_exceeded", "string_above_max_length", "exceed_context_size_error"})
_CONTEXT_PHRASES = ("maximum context length", "context window", "context length", "exceeds the context size")
_QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"})
_RATE_CODES = frozenset({"rate_limit_exceeded", "rate_limit_error", "tokens", "requests"})
_SERVER_CODES = frozenset({"server_error", "vector_store_timeout", "overloaded", "service_unavailable"})


_REALTIME_ERRORS: tuple[type[BaseException], ...] = tuple(
    getattr(openai, name)
    for name in ("WebSocketConnectionClosedError", "WebSocketQueueFullError")
    if hasattr(openai, name)  # the realtime websocket errors came after openai 2.0, the lowest SDK supported
)


def _field(body: object, name: str) -> str | None:
    value = body.get(name) if isinstance(body, Mapping) else None
    return str(value) if value is not None else None


def _is_context_overflow(code: str | None, kind: str | None, message: str) -> bool:
    if code in _CONTEXT_CODES or kind in _CONTEXT_CODES:
        return True
    lowered = message.lower()
    return any(phrase in lowered for phrase in _CONTEXT_PHRASES)


def error_from_api(
    message: str,
    *,
    code: str | None = None,
    kind: str | None = None,
    status: int | None = None,
    **api_fields: Any,
) -> LLMAPIError:
    """The taxonomy error for an API error described by its message, ``code`` and ``type``.

    ``status`` (the HTTP status, when there is one) decides first (5xx and 408, a
    request timeout, are retryable server errors); the codes decide for errors
    reported inside a stream or a failed response.
    """
    label = f"HTTP {status}" if status is not None else "API error"
    detail = f" [{code or kind}]" if (code or kind) else ""
    text = f"{label}{detail}: {message}"
    fields: dict[str, Any] = {"status_code": status, "context": {"code": code, "type": kind}, **api_fields}
    if code in _QUOTA_CODES or kind in _QUOTA_CODES:
        return LLMQuotaExhaustedError(f"{text} (quota or billing exhausted: retrying will not help)", **fields)
    if status == 429 or (status is None and (code in _RATE_CODES or kind in _RATE_CODES)):
        return LLMRateLimitError(text, **fields)
    if (status is not None and (status >= 500 or status == 408)) or (
        status is None and not _is_client_side(code, kind)
    ):
        return LLMServerError(text, **fields)
    if _is_context_overflow(code, kind, message):
        return LLMBadRequestError(
            f"the prompt does not fit the model's context window ({text}); shorten the messages or raise the limit",
            **fields,
        )
    if status in (401, 403):
        return LLMAuthenticationError(f"{text} (check the api_key / OPENAI_API_KEY of this provider)", **fields)
    return LLMBadRequestError(text, **fields)


def _is_client_side(code: str | None, kind: str | None) -> bool:
    if code in _SERVER_CODES or kind in _SERVER_CODES:
        return False
    names = f"{code or ''} {kind or ''}"
    return "invalid" in names or "context" in names or "policy" in names or "not_found" in names


def _from_status_error(error: openai.APIStatusError) -> LLMError:
    body = error.body
    message = _field(body, "message") or (body if isinstance(body, str) and body else error.message)
    headers = dict(error.response.headers)
    if headers.get("x-should-retry") == "true" and error.status_code < 500 and error.status_code != 429:
        return LLMServerError(
            f"HTTP {error.status_code}: {message} (the server asked for a retry)",
            status_code=error.status_code,
            response_body=body,
            request_id=error.request_id,
            headers=headers,
            cause=error,
        )
    return error_from_api(
        message,
        code=error.code or _field(body, "code"),
        kind=error.type or _field(body, "type"),
        status=error.status_code,
        response_body=body,
        request_id=error.request_id,
        headers=headers,
        cause=error,
    )


def _partial_text(completion: Any) -> str:
    choices = getattr(completion, "choices", None) or []
    return (choices[0].message.content or "") if choices else ""


def classify_error(error: BaseException) -> LLMError | None:
    """The core error for ``error``, or ``None`` when it is not the SDK's (core's fallback decides)."""
    if isinstance(error, openai.APIStatusError):
        return _from_status_error(error)
    if isinstance(error, openai.APITimeoutError):
        return LLMTimeoutError("the request to the API timed out", cause=error)
    if isinstance(error, openai.APIConnectionError):
        reason = error.__cause__ or error.message
        return LLMConnectionError(f"could not reach the API: {reason}", cause=error)
    if isinstance(error, openai.APIResponseValidationError):
        return LLMServerError(
            f"the API answered with data that does not match its schema: {error.message}",
            status_code=error.status_code,
            response_body=error.body,
            cause=error,
        )
    if isinstance(error, openai.APIError):  # an error event inside a stream
        return error_from_api(
            error.message,
            code=error.code or _field(error.body, "code"),
            kind=error.type or _field(error.body, "type"),
            response_body=error.body,
            cause=error,
        )
    if isinstance(error, openai.LengthFinishReasonError):
        return LLMIncompleteError(
            "structured output was cut short by the token limit; raise max_tokens",
            reason="length",
            partial_text=_partial_text(error.completion),
            cause=error,
        )
    if isinstance(error, openai.ContentFilterFinishReasonError):
        return LLMRefusalError("the provider's content filter blocked the answer", refusal=str(error), cause=error)
    if isinstance(error, _REALTIME_ERRORS):
        return LLMConnectionError(f"the realtime connection failed: {error}", cause=error)
    if isinstance(error, (openai.OpenAIError, openai.InvalidWebhookSignatureError)):
        return LLMConfigurationError(f"the OpenAI client is misconfigured: {error}", cause=error)
    if isinstance(error, json.JSONDecodeError):
        return LLMServerError(f"the API sent a body that is not valid JSON ({error.msg})", cause=error)
    return None
