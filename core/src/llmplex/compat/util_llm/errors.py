"""util_llm's error classes (``src.utils.llm_errors``): llmplex's, built the way util_llm built them.

Each is a subclass of the llmplex error of the same name, so ``except
llmplex.LLMRefusalError`` still catches it, and takes util_llm's one
positional argument: ``LLMRefusalError(refusal_message)``,
``LLMIncompleteError(reason)``, ``LLMRateLimitError(message)``,
``LLMTimeoutError(message)``. The adapter raises these; `as_util_llm`
turns an llmplex error of the same kind into one, keeping its details.
"""

from __future__ import annotations

from typing import Any

from llmplex import errors as core
from llmplex.errors import LLMError

__all__ = ["LLMError", "LLMIncompleteError", "LLMRateLimitError", "LLMRefusalError", "LLMTimeoutError", "as_util_llm"]


class LLMRefusalError(core.LLMRefusalError):
    """The model refused; ``refusal_message`` is its explanation (``str(e)``: ``"Model refused: ..."``)."""

    def __init__(self, refusal_message: str | None = None, *, refusal: str | None = None, **kwargs: Any) -> None:
        text = refusal if refusal is not None else refusal_message
        super().__init__(kwargs.pop("message", None) or f"Model refused: {text}", refusal=text, **kwargs)


class LLMIncompleteError(core.LLMIncompleteError):
    """The answer was cut short; ``reason`` is the Responses API's (``"max_output_tokens"``, ``"content_filter"``)."""

    def __init__(self, reason: str = "unknown", **kwargs: Any) -> None:
        super().__init__(kwargs.pop("message", None) or f"Response incomplete: {reason}", reason=reason, **kwargs)


class LLMRateLimitError(core.LLMRateLimitError):
    """Rate limited after every retry."""


class LLMTimeoutError(core.LLMTimeoutError):
    """Timed out after every retry."""


_REASONS = {"length": "max_output_tokens"}
"""llmplex's incomplete reasons as the Responses API's ``incomplete_details.reason``, util_llm's ``e.reason``."""

_KINDS: tuple[tuple[type[core.LLMError], type[core.LLMError]], ...] = (
    (core.LLMRefusalError, LLMRefusalError),
    (core.LLMIncompleteError, LLMIncompleteError),
    (core.LLMRateLimitError, LLMRateLimitError),
    (core.LLMTimeoutError, LLMTimeoutError),
)


def as_util_llm(error: core.LLMError) -> core.LLMError:
    """``error`` as util_llm's class of its kind (the same object when it is one already, or has no such kind)."""
    for theirs, ours in _KINDS:
        if isinstance(error, theirs) and not isinstance(error, ours):
            twin = ours.__new__(ours)
            Exception.__init__(twin, *error.args)
            twin.__dict__.update(error.__dict__)
            if isinstance(twin, core.LLMIncompleteError):
                twin.reason = _REASONS.get(twin.reason, twin.reason)
            twin.__cause__, twin.__traceback__ = error.__cause__ or error, error.__traceback__
            return twin
    return error
