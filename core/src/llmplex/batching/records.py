"""A batch result as one JSON object: ``{"ok": true, "response": ...}`` or ``{"ok": false, "error": ...}``."""

from __future__ import annotations

from typing import Any

from llmplex import errors
from llmplex.errors import LLMAPIError, LLMError
from llmplex.types import Response

__all__ = ["error_record", "from_record", "result_record"]


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


def from_record(record: dict[str, Any]) -> Response | LLMError:
    """The Response or typed error a record stands for (an error of the type it names, its message,
    ``retryable``, ``attempts`` and ``status_code``; the cause stays where it was raised)."""
    if record.get("ok"):
        return Response.model_validate(record["response"])
    fields = record.get("error") or {}
    kind = getattr(errors, str(fields.get("type")), None)
    if not (isinstance(kind, type) and issubclass(kind, LLMError)):
        kind = LLMError
    message = str(fields.get("message") or "the request failed")
    given = fields.get("attempts")
    attempts = given if isinstance(given, int) else 1
    extra = {"status_code": fields.get("status_code")} if issubclass(kind, LLMAPIError) else {}
    try:
        error = kind(message, attempts=attempts, **extra)
    except TypeError:  # a subclass that needs more than a message
        error = LLMError(message, attempts=attempts)
    if "retryable" in fields and fields["retryable"] is not type(error).retryable:
        error.retryable = bool(fields["retryable"])
    return error
