"""One exit status per kind of failure, so scripts can react without parsing text."""

from __future__ import annotations

from llmplex import errors

__all__ = ["BATCH_ALL_FAILED", "BATCH_INTERRUPTED", "BATCH_SOME_FAILED", "exit_code_for"]

BATCH_SOME_FAILED = 15
"""``llmplex batch`` finished, and some of its requests failed (their errors are in the results)."""
BATCH_ALL_FAILED = 16
"""``llmplex batch`` finished, and every one of its requests failed."""
BATCH_INTERRUPTED = 130
"""``llmplex batch`` was interrupted (Ctrl-C); ``--resume`` finishes it."""

# First match wins: a subclass comes before its base (quota before rate limit).
_CODES: tuple[tuple[type[errors.LLMError], int], ...] = (
    (errors.LLMConfigurationError, 3),  # LLMAuthenticationError included: fix the key
    (errors.LLMQuotaExhaustedError, 5),
    (errors.LLMRateLimitError, 4),
    (errors.LLMServerError, 6),
    (errors.LLMBadRequestError, 7),
    (errors.LLMConnectionError, 8),
    (errors.LLMTimeoutError, 9),  # LLMDeadlineExceededError included
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
