"""An HTTP error answer as the core error taxonomy: the default status mapping every HTTP plugin can share.

    from llmplex.http import classify_http_error

    @hookimpl
    def llmplex_classify_error(error):
        return classify_http_error(error, key_hint="check ECHO_API_KEY")

=========================  ===============================================
status                     error
=========================  ===============================================
401, 403                   ``LLMAuthenticationError`` (never retried)
402                        ``LLMQuotaExhaustedError`` (never retried)
408                        ``LLMServerError`` (retried)
429                        ``LLMRateLimitError`` (retried), or ``LLMQuotaExhaustedError``
                           when the body's error code or type names a quota, billing or credit
other 4xx                  ``LLMBadRequestError`` (400, 404, 409, 413, 422: never retried)
5xx, 529                   ``LLMServerError`` (retried)
anything else              ``LLMAPIError`` (never retried)
=========================  ===============================================

The wait a provider asks for is read from the headers by the error classes
(``retry-after-ms``, then ``Retry-After`` in seconds or as an HTTP date). A
body that is not JSON (a proxy's HTML 502 page) gives a message with a short
excerpt of its text, secrets masked. A plugin extends the mapping with
``override``: a function of the status and the body returning the error class
to use, or ``None`` for the default.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import Any

from llmplex.errors import (
    LLMAPIError,
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMServerError,
)

__all__ = [
    "Override",
    "body_excerpt",
    "classify_http_error",
    "default_error_class",
    "error_for_status",
    "error_from_response",
]

Override = Callable[[int, Any], type[LLMAPIError] | None]
"""A plugin's own reading of an error answer: ``(status, body)`` to an error class, or ``None`` for the default."""

EXCERPT_LENGTH = 200
"""Characters of a body that is not JSON kept in the error message."""

BODY_LENGTH = 2000
"""Characters of a body that is not JSON kept as ``response_body``."""

_QUOTA_WORDS = ("quota", "billing", "credit")
_REQUEST_ID_HEADERS = ("x-request-id", "request-id")
_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")
_WAITS = (LLMRateLimitError, LLMServerError)


def error_for_status(
    status: int,
    headers: Mapping[str, str] | None = None,
    body: Any = None,
    *,
    provider: str | None = None,
    model: str | None = None,
    key_hint: str | None = None,
    override: Override | None = None,
    retry_after: float | None = None,
    request_id: str | None = None,
    context: Mapping[str, Any] | None = None,
    cause: BaseException | None = None,
) -> LLMAPIError:
    """The taxonomy error for an answer with HTTP ``status``, its ``headers`` and its ``body``.

    ``body`` is the parsed JSON, the text of a body that is not JSON, or the raw
    bytes of the body (parsed here: JSON when it is, else its text).
    ``key_hint`` ends the message of a 401/403 (``"check ECHO_API_KEY"``);
    ``retry_after`` is a wait the plugin read from the body (the headers are read
    anyway); ``request_id`` defaults to the ``x-request-id``/``request-id`` header;
    ``context`` is kept as the error's ``context``. Core fills ``provider`` and ``model`` when they are not given.
    """
    headers = headers or {}
    if isinstance(body, bytes | bytearray):
        body = _parsed(bytes(body).decode("utf-8", errors="replace"))
    cls = (override(status, body) if override else None) or default_error_class(status, body)
    message = f"the provider answered {_status_line(status)}: {_detail(body) or 'no explanation given'}"
    if key_hint and issubclass(cls, LLMAuthenticationError):
        message = f"{message}; {key_hint}"
    facts: dict[str, Any] = {
        "status_code": status,
        "response_body": body if not isinstance(body, str) else body[:BODY_LENGTH],
        "headers": headers,
        "request_id": request_id or _request_id(headers),
        "provider": provider,
        "model": model,
        "context": context,
        "cause": cause,
    }
    if issubclass(cls, _WAITS):
        facts["retry_after"] = retry_after
    return cls(message, **facts)


def default_error_class(status: int, body: Any) -> type[LLMAPIError]:
    """The error class of the default mapping (see the module's table)."""
    if status in (401, 403):
        return LLMAuthenticationError
    if status == 402 or (status == 429 and _names_quota(body)):
        return LLMQuotaExhaustedError
    if status == 429:
        return LLMRateLimitError
    if status == 408 or 500 <= status < 600:
        return LLMServerError
    if 400 <= status < 500:
        return LLMBadRequestError
    return LLMAPIError


def error_from_response(response: Any, **options: Any) -> LLMAPIError:
    """``error_for_status`` for an httpx (or httpx2) ``Response`` whose body was read.

    The body is its JSON when it parses, else its text; a streamed response
    must be read first (``response.read()`` / ``await response.aread()``).
    ``options`` are those of ``error_for_status``.
    """
    return error_for_status(response.status_code, response.headers, _body(response), **options)


def classify_http_error(error: BaseException, **options: Any) -> LLMAPIError | None:
    """The taxonomy error for an httpx ``HTTPStatusError`` (``raise_for_status()``), ``None`` for anything else.

    The one line of a plugin's ``llmplex_classify_error``: core's fallback
    classifier maps the timeouts and connection failures it returns ``None`` for.
    ``options`` are those of ``error_for_status``.
    """
    if not any(cls.__name__ == "HTTPStatusError" for cls in type(error).__mro__):
        return None
    response = getattr(error, "response", None)
    if response is None:
        return None
    return error_from_response(response, **({"cause": error} | options))


def body_excerpt(text: str, limit: int = EXCERPT_LENGTH) -> str:
    """A short, one-line excerpt of a body that is not JSON: tags dropped, blanks collapsed, cut at ``limit``."""
    flat = _SPACE.sub(" ", _TAG.sub(" ", text)).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _status_line(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _error_object(body: Any) -> Mapping[str, Any]:
    """The error object of a JSON body: its ``error`` member when that is an object, else the body."""
    if not isinstance(body, Mapping):
        return {}
    inner = body.get("error")
    return inner if isinstance(inner, Mapping) else body


def _detail(body: Any) -> str:
    """What the provider said went wrong: the message of a JSON error body, else an excerpt of the body."""
    if isinstance(body, str):
        return body_excerpt(body)
    if isinstance(body, Mapping):
        for member in (_error_object(body), body):
            for name in ("message", "detail", "error", "error_description"):
                value = member.get(name)
                if isinstance(value, str) and value:
                    return body_excerpt(value)
    if body is None:
        return ""
    try:
        return body_excerpt(json.dumps(body, default=str)[: EXCERPT_LENGTH * 2])
    except (ValueError, RecursionError):  # a circular or too deeply nested body
        return type(body).__name__


def _names_quota(body: Any) -> bool:
    """Whether the error code or type of a JSON body names a quota, billing or credit problem."""
    error = _error_object(body)
    names = " ".join(str(error.get(field) or "") for field in ("code", "type")).lower()
    return any(word in names for word in _QUOTA_WORDS)


def _request_id(headers: Mapping[str, str]) -> str | None:
    lowered = {name.lower(): value for name, value in headers.items()}
    return next((lowered[name] for name in _REQUEST_ID_HEADERS if name in lowered), None)


def _body(response: Any) -> Any:
    try:
        text = response.text
    except Exception as error:
        if type(error).__name__ == "ResponseNotRead":  # a streamed body that was not read: the status is known
            return None
        raise
    return _parsed(text)


def _parsed(text: str) -> Any:
    """The JSON of a body, or its text when it is not JSON (or nested past Python's limit); ``None`` when empty."""
    try:
        return json.loads(text) if text else None
    except (ValueError, RecursionError):
        return text
