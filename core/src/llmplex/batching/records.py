"""A batch result as one JSON object: ``{"ok": true, "response": ...}`` or ``{"ok": false, "error": ...}``."""

from __future__ import annotations

from typing import Any

from llmplex.errors import LLMAPIError, LLMError
from llmplex.types import Response

__all__ = ["error_record", "result_record"]


def result_record(result: Response | LLMError) -> dict[str, Any]:
    """The JSON-ready record of one finished request."""
    if isinstance(result, Response):
        return {"ok": True, "response": result.model_dump(mode="json")}
    return {"ok": False, "error": error_record(result)}


def error_record(error: LLMError) -> dict[str, Any]:
    """An error as ``{"type", "message", "retryable", ...}`` (status code when the provider sent one)."""
    record: dict[str, Any] = {
        "type": type(error).__name__,
        "message": str(error),
        "retryable": error.retryable,
        "attempts": error.attempts,
    }
    if isinstance(error, LLMAPIError) and error.status_code is not None:
        record["status_code"] = error.status_code
    return record
