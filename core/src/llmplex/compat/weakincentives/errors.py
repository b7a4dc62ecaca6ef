"""weakincentives' evaluation errors, as llmplex errors, and the mapping from llmplex's taxonomy to them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final, Literal

from llmplex.errors import (
    LLMAPIError,
    LLMBudgetExceededError,
    LLMConfigurationError,
    LLMConnectionError,
    LLMDeadlineExceededError,
    LLMError,
    LLMIncompleteError,
    LLMOutputParseError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMServerError,
    LLMTimeoutError,
    LLMToolLoopError,
    LLMToolSourceError,
)

__all__ = [
    "PROMPT_EVALUATION_PHASE_BUDGET",
    "PROMPT_EVALUATION_PHASE_REQUEST",
    "PROMPT_EVALUATION_PHASE_RESPONSE",
    "PROMPT_EVALUATION_PHASE_TOOL",
    "DeadlineExceededError",
    "InvalidValueError",
    "OutputParseError",
    "PromptEvaluationError",
    "PromptEvaluationPhase",
    "PromptRenderError",
    "PromptValidationError",
    "ThrottleDetails",
    "ThrottleError",
    "ThrottleKind",
    "evaluation_error",
]

PromptEvaluationPhase = Literal["request", "response", "tool", "budget"]
PROMPT_EVALUATION_PHASE_REQUEST: Final[PromptEvaluationPhase] = "request"
PROMPT_EVALUATION_PHASE_RESPONSE: Final[PromptEvaluationPhase] = "response"
PROMPT_EVALUATION_PHASE_TOOL: Final[PromptEvaluationPhase] = "tool"
PROMPT_EVALUATION_PHASE_BUDGET: Final[PromptEvaluationPhase] = "budget"

ThrottleKind = Literal["rate_limit", "quota_exhausted", "timeout", "unknown"]


class InvalidValueError(LLMConfigurationError, ValueError):
    """A value weakincentives rejects with ``ValueError`` (a deadline in the past, an empty budget, ...)."""


class PromptValidationError(LLMConfigurationError, ValueError):
    """A prompt that cannot be built: empty namespace or key, an output type that is not a dataclass, ..."""


class PromptEvaluationError(LLMError, RuntimeError):
    """Evaluating a prompt failed; ``phase`` says where: ``request``, ``response``, ``tool`` or ``budget``.

    The llmplex error behind it, if any, is ``cause`` (and ``__cause__``).
    """

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str,
        phase: PromptEvaluationPhase,
        provider_payload: dict[str, Any] | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message, cause=cause)
        self.prompt_name = prompt_name
        self.phase: PromptEvaluationPhase = phase
        self.provider_payload = provider_payload


class PromptRenderError(PromptEvaluationError):
    """A section could not be rendered (a missing placeholder, params that are not a dataclass)."""

    def __init__(
        self,
        message: str,
        *,
        section_path: tuple[str, ...] = (),
        dataclass_type: type | None = None,
        placeholder: str | None = None,
        prompt_name: str = "",
    ) -> None:
        super().__init__(message, prompt_name=prompt_name, phase=PROMPT_EVALUATION_PHASE_REQUEST)
        self.section_path = section_path
        self.dataclass_type = dataclass_type
        self.placeholder = placeholder


class OutputParseError(PromptEvaluationError):
    """The model's structured output did not fit the prompt's output dataclass (phase ``response``)."""

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str = "",
        dataclass_type: type | None = None,
        provider_payload: dict[str, Any] | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(
            message,
            prompt_name=prompt_name,
            phase=PROMPT_EVALUATION_PHASE_RESPONSE,
            provider_payload=provider_payload,
            cause=cause,
        )
        self.dataclass_type = dataclass_type


class DeadlineExceededError(PromptEvaluationError, LLMDeadlineExceededError):
    """The deadline passed; raised before the request is sent when it had already expired (phase ``request``)."""

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str = "",
        phase: PromptEvaluationPhase = PROMPT_EVALUATION_PHASE_REQUEST,
        provider_payload: dict[str, Any] | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message, prompt_name=prompt_name, phase=phase, provider_payload=provider_payload, cause=cause)


@dataclass(frozen=True, slots=True)
class ThrottleDetails:
    """What the provider's throttling looked like when llmplex stopped retrying."""

    kind: ThrottleKind
    retry_after: timedelta | None = None
    attempts: int = 1
    retry_safe: bool = True
    provider_payload: dict[str, Any] | None = None


class ThrottleError(PromptEvaluationError):
    """The provider throttled the request (429, quota, timeout, overload) and llmplex gave up retrying.

    After the retries are exhausted ``retry_safe`` is ``False``; ``retry_after``
    is the wait the provider last asked for, ``attempts`` the requests sent.
    """

    def __init__(
        self,
        message: str,
        *,
        prompt_name: str,
        phase: PromptEvaluationPhase = PROMPT_EVALUATION_PHASE_REQUEST,
        details: ThrottleDetails,
        cause: BaseException | None = None,
    ) -> None:
        self.details = details
        super().__init__(
            message, prompt_name=prompt_name, phase=phase, provider_payload=details.provider_payload, cause=cause
        )
        self.details = details  # LLMError.__init__ set attempts=1 through the property

    @property
    def kind(self) -> ThrottleKind:
        """``rate_limit``, ``quota_exhausted``, ``timeout`` or ``unknown`` (overload, connection)."""
        return self.details.kind

    @property
    def retry_after(self) -> timedelta | None:
        """The wait the provider asked for, if it said."""
        return self.details.retry_after

    @property
    def attempts(self) -> int:
        """Requests sent before giving up."""
        return self.details.attempts

    @attempts.setter
    def attempts(self, value: int) -> None:
        self.details = dataclasses.replace(self.details, attempts=value)

    @property
    def retry_safe(self) -> bool:
        """Whether sending the same request again is advisable (``False`` once retries are exhausted)."""
        return self.details.retry_safe


def _payload(error: LLMError) -> dict[str, Any] | None:
    body = error.response_body if isinstance(error, LLMAPIError) else None
    return body if isinstance(body, dict) else None


class ToolPhaseError(LLMToolSourceError):
    """A tool call weakincentives ends the evaluation for (no handler, a deadline the tool overran): raised
    inside llmplex's tool loop, which stops at it; ``evaluate`` raises it as a ``PromptEvaluationError``
    with phase ``tool``."""

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__(message, server="weakincentives tool", **kwargs)


def _throttle_kind(error: LLMError) -> ThrottleKind | None:
    if isinstance(error, LLMQuotaExhaustedError):
        return "quota_exhausted"
    if isinstance(error, LLMRateLimitError):
        return "rate_limit"
    if isinstance(error, LLMTimeoutError):
        return "timeout"
    if isinstance(error, LLMConnectionError) or (isinstance(error, LLMServerError) and error.status_code is not None):
        return "unknown"
    return None


def _phase(error: LLMError) -> PromptEvaluationPhase:
    if isinstance(error, LLMBudgetExceededError):
        return PROMPT_EVALUATION_PHASE_BUDGET
    if isinstance(error, (LLMToolLoopError, ToolPhaseError)):
        return PROMPT_EVALUATION_PHASE_TOOL
    if isinstance(error, (LLMRefusalError, LLMIncompleteError, LLMServerError)):
        return PROMPT_EVALUATION_PHASE_RESPONSE  # a server error without a status: the answer was unreadable
    return PROMPT_EVALUATION_PHASE_REQUEST


def evaluation_error(error: LLMError, prompt_name: str, output_type: type | None = None) -> PromptEvaluationError:
    """The weakincentives error for an llmplex error that ended an evaluation (``error`` is its cause)."""
    if isinstance(error, PromptEvaluationError):
        return error
    message = str(error)
    payload = _payload(error)
    if isinstance(error, ToolPhaseError):
        message = error.message
    if isinstance(error, LLMDeadlineExceededError):
        return DeadlineExceededError(message, prompt_name=prompt_name, provider_payload=payload, cause=error)
    if isinstance(error, LLMOutputParseError):
        if not error.raw_text.strip():
            message = f"Provider response did not include structured output: {message}"
        return OutputParseError(
            message, prompt_name=prompt_name, dataclass_type=output_type, provider_payload=payload, cause=error
        )
    kind = _throttle_kind(error)
    if kind is not None:
        wait = getattr(error, "retry_after", None)
        details = ThrottleDetails(
            kind=kind,
            retry_after=timedelta(seconds=wait) if wait else None,
            attempts=error.attempts,
            retry_safe=False,
            provider_payload=payload,
        )
        return ThrottleError(message, prompt_name=prompt_name, details=details, cause=error)
    return PromptEvaluationError(
        message, prompt_name=prompt_name, phase=_phase(error), provider_payload=payload, cause=error
    )
