"""Azure OpenAI's error shapes in the core taxonomy: content-filter results become refusals with their categories.

A prompt the content filter blocks is a 400 whose error has ``code``
``content_filter`` and ``innererror.content_filter_result`` (one entry per
category: ``hate``, ``sexual``, ``violence``, ``self_harm``, ``jailbreak``, ...);
an answer it blocks ends with ``finish_reason`` ``content_filter`` and the
choice's ``content_filter_results``. Everything else is the openai plugin's mapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import openai
from llmplex_openai.errors import classify_error as classify_openai_error

from llmplex.errors import LLMError, LLMRefusalError

__all__ = ["classify_error", "filtered_categories", "refusal"]

_FILTER_CODES = frozenset({"content_filter", "ResponsibleAIPolicyViolation"})


def filtered_categories(results: Any) -> dict[str, str]:
    """The categories that were filtered (or detected), each with its severity (``detected`` without one)."""
    found: dict[str, str] = {}
    if not isinstance(results, Mapping):
        return found
    for name, verdict in results.items():
        if isinstance(verdict, Mapping) and (verdict.get("filtered") or verdict.get("detected")):
            found[str(name)] = str(verdict.get("severity") or "detected")
    return found


def refusal(results: Any, what: str, **kwargs: Any) -> LLMRefusalError:
    """The refusal for content-filter ``results`` on ``what`` (the prompt, the answer)."""
    categories = filtered_categories(results)
    named = ", ".join(f"{name} ({level})" for name, level in categories.items()) or "no category given"
    text = f"Azure OpenAI's content filter blocked {what}: {named}"
    context = {"content_filter_categories": categories, "content_filter_results": results}
    return LLMRefusalError(text, refusal=text, context=context, **kwargs)


def _filter_results(body: Any) -> Any:
    if not isinstance(body, Mapping):
        return None
    inner = body.get("innererror")
    codes = {body.get("code"), inner.get("code") if isinstance(inner, Mapping) else None}
    if not codes & _FILTER_CODES:
        return None
    return (inner.get("content_filter_result") if isinstance(inner, Mapping) else None) or {}


def classify_error(error: BaseException) -> LLMError | None:
    """A content-filter 400 as ``LLMRefusalError`` with its categories; the rest as the openai plugin maps it."""
    if isinstance(error, openai.APIStatusError):
        results = _filter_results(error.body)
        if results is not None:
            return refusal(results, "the prompt", cause=error)
    return classify_openai_error(error)
