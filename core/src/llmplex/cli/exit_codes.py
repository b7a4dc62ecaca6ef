"""One exit status per kind of failure, so scripts can react without parsing text."""

from __future__ import annotations

from llmplex import errors

__all__ = ["exit_code_for"]

_CODES: tuple[tuple[type[errors.LLMError], int], ...] = (
    (errors.LLMConfigurationError, 3),
    (errors.LLMRateLimitError, 4),
    (errors.LLMQuotaExhaustedError, 5),
    (errors.LLMServerError, 6),
    (errors.LLMBadRequestError, 7),
    (errors.LLMConnectionError, 8),
    (errors.LLMTimeoutError, 9),
    (errors.LLMDeadlineExceededError, 9),
    (errors.LLMBudgetExceededError, 10),
    (errors.LLMRefusalError, 11),
    (errors.LLMIncompleteError, 12),
    (errors.LLMOutputParseError, 13),
    (errors.LLMSubprocessError, 14),
)


def exit_code_for(error: errors.LLMError) -> int:
    """The process exit status for ``error`` (1 for kinds without their own)."""
    for kind, code in _CODES:
        if isinstance(error, kind):
            return code
    return 1
