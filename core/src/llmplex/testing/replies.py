"""What a conformance test asks a plugin's fake transport to answer: a reply, a failure, a stall."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Literal

from llmplex.errors import (
    LLMAPIError,
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
)
from llmplex.types import FinishReason, ToolCall, Usage

__all__ = ["ERROR_KINDS", "ErrorKind", "ExpectedError", "FakeError", "Reply", "RetryAfterForm"]

ErrorKind = Literal[
    "bad_request",
    "authentication",
    "forbidden",
    "not_found",
    "request_timeout",
    "conflict",
    "too_large",
    "unprocessable",
    "rate_limit",
    "quota",
    "server",
    "bad_gateway",
    "unavailable",
    "overloaded",
    "connection",
    "timeout",
]

RetryAfterForm = Literal["seconds", "http-date", "ms"]


@dataclass(frozen=True)
class Reply:
    """One successful answer, to be given in the provider's own wire shape.

    ``finish_reason`` is the core reason the answer ends with (``None``:
    ``"tool_calls"`` when there are tool calls, else ``"stop"``); give ``"length"``
    the way the provider says it ran out of tokens. ``refusal`` is a refusal in
    the provider's refusal field. ``usage`` counts input tokens the OpenAI way
    (cached ones included). ``delay`` is how long the provider takes to answer,
    in seconds. ``reasoning`` is an opaque token (a signature) the answer's
    reasoning carries, for adapters of providers that keep reasoning state
    (``keeps_reasoning``): they put it where the provider puts its signature.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=lambda: Usage(input_tokens=11, output_tokens=7))
    model: str = ""
    response_id: str = "resp_kit_1"
    finish_reason: FinishReason | None = None
    refusal: str | None = None
    delay: float = 0.0
    reasoning: str | None = None

    @property
    def finish(self) -> FinishReason:
        """The finish reason the answer ends with."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


@dataclass(frozen=True)
class FakeError:
    """One failure, to be given the way the provider fails.

    ``kind`` says what went wrong (see ``ERROR_KINDS`` for the HTTP status of
    each); ``message`` goes into the provider's error body (it may contain the API
    key, as some providers echo it: redaction is tested); ``retry_after``
    (seconds) is sent as ``retry_after_form``: ``Retry-After: 7``, ``Retry-After``
    as an HTTP date, or ``retry-after-ms: 7000`` (``headers``).
    """

    kind: ErrorKind
    message: str
    retry_after: float | None = None
    retry_after_form: RetryAfterForm = "seconds"

    @property
    def status(self) -> int | None:
        """The HTTP status of this kind (``None`` for failures without one)."""
        return ERROR_KINDS[self.kind].status

    def headers(self, now: float | None = None) -> dict[str, str]:
        """The response headers carrying ``retry_after`` in ``retry_after_form`` (empty without one)."""
        if self.retry_after is None:
            return {}
        if self.retry_after_form == "ms":
            return {"retry-after-ms": str(round(self.retry_after * 1000))}
        if self.retry_after_form == "http-date":
            moment = (time.time() if now is None else now) + self.retry_after
            return {"retry-after": formatdate(moment, usegmt=True)}
        return {"retry-after": str(round(self.retry_after))}


@dataclass(frozen=True)
class ExpectedError:
    """The HTTP status of an error kind, the taxonomy classes it may become, and whether it is retryable."""

    status: int | None
    classes: tuple[type[LLMError], ...]
    retryable: bool

    @property
    def has_status(self) -> bool:
        """Whether the error must carry the status (every API error of a kind with one)."""
        return self.status is not None


ERROR_KINDS: Mapping[ErrorKind, ExpectedError] = {
    "bad_request": ExpectedError(400, (LLMBadRequestError,), retryable=False),
    "authentication": ExpectedError(401, (LLMAuthenticationError,), retryable=False),
    "forbidden": ExpectedError(403, (LLMAuthenticationError,), retryable=False),
    "not_found": ExpectedError(404, (LLMBadRequestError,), retryable=False),
    "request_timeout": ExpectedError(408, (LLMAPIError, LLMTimeoutError), retryable=True),
    "conflict": ExpectedError(409, (LLMBadRequestError,), retryable=False),
    "too_large": ExpectedError(413, (LLMBadRequestError,), retryable=False),
    "unprocessable": ExpectedError(422, (LLMBadRequestError,), retryable=False),
    "rate_limit": ExpectedError(429, (LLMRateLimitError,), retryable=True),
    "quota": ExpectedError(429, (LLMQuotaExhaustedError,), retryable=False),
    "server": ExpectedError(500, (LLMServerError,), retryable=True),
    "bad_gateway": ExpectedError(502, (LLMServerError,), retryable=True),
    "unavailable": ExpectedError(503, (LLMServerError,), retryable=True),
    "overloaded": ExpectedError(529, (LLMServerError,), retryable=True),
    "connection": ExpectedError(None, (LLMConnectionError,), retryable=True),
    "timeout": ExpectedError(None, (LLMTimeoutError,), retryable=True),
}
"""Every failure kind: its status (``quota`` is the provider's own quota answer, often a 429;
``bad_gateway`` has an HTML body, as a proxy sends), what it must become, and whether core retries it."""
