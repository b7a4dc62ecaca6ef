"""Answers that are errors in the core taxonomy: refusals and truncated structured output."""

from __future__ import annotations

from llmplex.errors import LLMIncompleteError, LLMRefusalError
from llmplex.types import FinishReason, Request

__all__ = ["raise_for_outcome"]


def raise_for_outcome(request: Request, finish_reason: FinishReason, text: str, refusal: str | None) -> None:
    """Raise ``LLMRefusalError`` for a refusal, ``LLMIncompleteError`` for cut structured output."""
    if refusal:
        raise LLMRefusalError(f"the model refused: {refusal}", refusal=refusal, context={"partial_text": text})
    if request.output is not None and finish_reason in ("length", "content_filter"):
        why = "the token limit" if finish_reason == "length" else "the content filter"
        raise LLMIncompleteError(
            f"structured output {request.output.name!r} was cut short by {why} after {len(text)} characters; "
            "raise max_tokens or simplify the schema",
            reason=finish_reason,
            partial_text=text,
        )
