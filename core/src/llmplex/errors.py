"""The error taxonomy: every failure that leaves the public API is one of these.

Errors are plain exception classes (no pydantic) so that importing them is cheap.
Each class says whether it is worth retrying through the ``retryable`` attribute;
the retry loop in core trusts nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from llmplex.masking.values import redact, redact_headers

__all__ = [
    "LLMAPIError",
    "LLMAuthenticationError",
    "LLMBadRequestError",
    "LLMBudgetExceededError",
    "LLMConfigurationError",
    "LLMConnectionError",
    "LLMDeadlineExceededError",
    "LLMError",
    "LLMGroupUnavailableError",
    "LLMIncompleteError",
    "LLMOutputParseError",
    "LLMQuotaExhaustedError",
    "LLMRateLimitError",
    "LLMRefusalError",
    "LLMServerError",
    "LLMSubprocessError",
    "LLMTimeoutError",
    "LLMToolLoopError",
    "LLMToolSourceError",
    "LLMUsageError",
]


class LLMError(Exception):
    """Base of every error llmplex raises.

    Attributes:
        provider: the provider prefix that failed (``"openai"``), if known.
        model: the model name without prefix, if known.
        attempts: how many attempts were made before giving up.
        retryable: whether the same request may succeed if sent again.
        cause: the underlying exception (also set as ``__cause__``).
        context: extra facts (request id, error type, fallback errors, ...).
    """

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        attempts: int = 1,
        cause: BaseException | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> None:
        self.message = redact(message)
        super().__init__(self.message)
        self.provider = provider
        self.model = model
        self.attempts = attempts
        self.cause = cause
        self.context: dict[str, Any] = dict(context or {})
        if cause is not None:
            self.__cause__ = cause

    def __str__(self) -> str:
        where = ":".join(p for p in (self.provider, self.model) if p)
        return f"[{where}] {self.message}" if where else self.message

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.message!r}, provider={self.provider!r}, "
            f"model={self.model!r}, attempts={self.attempts}, retryable={self.retryable})"
        )


class LLMConfigurationError(LLMError):
    """Bad or missing key, unknown provider, invalid config or option, missing plugin."""


class LLMAPIError(LLMError):
    """The provider answered with an error status.

    Attributes:
        status_code: the HTTP status, if there was one.
        response_body: the provider's error body (secrets redacted).
        request_id: the provider's request id, if it sent one.
        headers: the response headers that matter for diagnosis (without secret-named ones
            such as ``Authorization``; secrets in the others masked).
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        response_body: Any = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.status_code = status_code
        self.response_body = redact(response_body)
        self.request_id = request_id
        self.headers: dict[str, str] = redact_headers(headers or {})


def _requested_wait(retry_after: float | None, headers: Mapping[str, str]) -> float | None:
    if retry_after is None and not headers:
        return None
    from llmplex.retry_after import requested_wait

    return requested_wait(retry_after, headers)


class LLMRateLimitError(LLMAPIError):
    """429 Too Many Requests; ``retry_after`` is the wait the provider asked for, in seconds.

    Without ``retry_after=``, it is read from ``headers=``: ``retry-after-ms``, then
    ``Retry-After`` as seconds or as an HTTP date.
    """

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = _requested_wait(retry_after, self.headers)


class LLMGroupUnavailableError(LLMRateLimitError):
    """Every deployment of model group ``group`` is cooling down or at its rpm/tpm limit: nothing was sent.

    Retryable: ``retry_after`` is when the first deployment comes back, in seconds.
    """

    def __init__(self, message: str, *, group: str, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, retry_after=retry_after, **kwargs)
        self.group = group


class LLMQuotaExhaustedError(LLMRateLimitError):
    """Insufficient quota or billing problem: waiting will not help.

    A rate-limit error (the provider's answer is often a 429) that is never retried.
    """

    retryable = False


class LLMServerError(LLMAPIError):
    """5xx, 408 or overloaded; ``retry_after`` set when the provider asked for a wait (read as for
    ``LLMRateLimitError``)."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = _requested_wait(retry_after, self.headers)


class LLMUsageError(LLMServerError):
    """The provider's answer reported impossible token usage (negative, fractional, absurd or contradictory
    counts): that answer alone fails, and nothing of it is counted. Not retried by core (the provider may
    have charged for it); sending it again is the caller's choice."""

    retryable = False


class LLMBadRequestError(LLMAPIError):
    """Any other 4xx: invalid parameters, context too long, not found."""


class LLMAuthenticationError(LLMConfigurationError, LLMAPIError):
    """HTTP 401/403: the provider rejected the credentials (a missing, wrong or unauthorised key).

    Both a configuration error (fix the key) and an API error (``status_code``,
    ``response_body``); never retried.
    """


class LLMConnectionError(LLMError):
    """The connection could not be made or was reset."""

    retryable = True


class LLMTimeoutError(LLMError):
    """A request or subprocess did not finish in time."""

    retryable = True


class LLMSubprocessError(LLMError):
    """A CLI-based provider's process failed.

    Attributes:
        return_code: the process exit status.
        stderr: what it wrote to stderr (secrets redacted).
    """

    def __init__(self, message: str, *, return_code: int | None = None, stderr: str = "", **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.return_code = return_code
        self.stderr = redact(stderr)


class LLMBudgetExceededError(LLMError):
    """A token or request budget cap was reached; ``snapshot`` shows consumption."""

    def __init__(self, message: str, *, snapshot: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.snapshot: dict[str, Any] = dict(snapshot or {})


class LLMDeadlineExceededError(LLMTimeoutError):
    """The wall-clock deadline was reached before the request could finish.

    A timeout (``except LLMTimeoutError`` catches it) that is never retried: the time is spent.
    """

    retryable = False


class LLMRefusalError(LLMError):
    """The model refused to answer; ``refusal`` holds its explanation."""

    def __init__(self, message: str, *, refusal: str | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.refusal = refusal

    @property
    def refusal_message(self) -> str | None:
        """``refusal`` under util_llm's name for it."""
        return self.refusal


class LLMIncompleteError(LLMError):
    """The answer was cut short; ``reason`` says why and ``partial_text`` keeps what came."""

    def __init__(self, message: str, *, reason: str = "length", partial_text: str = "", **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.reason = reason
        self.partial_text = partial_text


class LLMOutputParseError(LLMError):
    """Structured output did not validate; keeps the raw text and the validation errors."""

    def __init__(
        self,
        message: str,
        *,
        raw_text: str = "",
        validation_errors: Sequence[Any] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.raw_text = raw_text
        self.validation_errors = list(validation_errors)


class LLMToolLoopError(LLMError):
    """The tool-calling loop hit ``max_tool_rounds`` without a final answer."""


class LLMToolSourceError(LLMError):
    """The source of a tool failed, not the tool: an MCP server that would not start, crashed, broke the
    protocol or listed no tools. The tool loop ends with it instead of telling the model.

    Attributes:
        server: the name of the MCP server.
        stderr: the end of what its process wrote to stderr (secrets masked), if it has a process.
    """

    def __init__(self, message: str, *, server: str, stderr: str = "", **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.server = server
        self.stderr = redact(stderr)
