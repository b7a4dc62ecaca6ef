"""What a conformance test asks a plugin's fake transport to answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from llmplex.errors import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
)
from llmplex.types import ToolCall, Usage

__all__ = ["ERROR_KINDS", "ErrorKind", "ExpectedError", "FakeError", "Reply"]

ErrorKind = Literal[
    "bad_request",
    "authentication",
    "not_found",
    "rate_limit",
    "quota",
    "server",
    "overloaded",
    "connection",
    "timeout",
]


@dataclass(frozen=True)
class Reply:
    """One successful answer, to be given in the provider's own wire shape."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=lambda: Usage(input_tokens=11, output_tokens=7))
    model: str = ""
    response_id: str = "resp_kit_1"


@dataclass(frozen=True)
class FakeError:
    """One failure, to be given the way the provider fails.

    ``kind`` says what went wrong; ``message`` goes into the provider's error body
    (it may contain the API key, as some providers echo it: redaction is tested);
    ``retry_after`` (seconds) goes into the ``Retry-After`` header for ``rate_limit``.

    Kinds: ``bad_request`` (400), ``authentication`` (401), ``not_found`` (404),
    ``rate_limit`` (429), ``quota`` (the provider's insufficient-quota answer),
    ``server`` (500), ``overloaded`` (503 or the provider's overloaded status),
    ``connection`` (the connection is refused or reset), ``timeout`` (the read times out).
    """

    kind: ErrorKind
    message: str
    retry_after: float | None = None


@dataclass(frozen=True)
class ExpectedError:
    """The taxonomy classes an error kind may become, and whether it is retryable."""

    classes: tuple[type[LLMError], ...]
    retryable: bool
    has_status: bool


ERROR_KINDS: Mapping[ErrorKind, ExpectedError] = {
    "bad_request": ExpectedError((LLMBadRequestError,), retryable=False, has_status=True),
    "authentication": ExpectedError((LLMAuthenticationError,), retryable=False, has_status=True),
    "not_found": ExpectedError((LLMBadRequestError,), retryable=False, has_status=True),
    "rate_limit": ExpectedError((LLMRateLimitError,), retryable=True, has_status=True),
    "quota": ExpectedError((LLMQuotaExhaustedError,), retryable=False, has_status=True),
    "server": ExpectedError((LLMServerError,), retryable=True, has_status=True),
    "overloaded": ExpectedError((LLMServerError,), retryable=True, has_status=True),
    "connection": ExpectedError((LLMConnectionError,), retryable=True, has_status=False),
    "timeout": ExpectedError((LLMTimeoutError,), retryable=True, has_status=False),
}
