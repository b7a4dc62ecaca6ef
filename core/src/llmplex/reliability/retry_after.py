"""The wait a provider asked for: ``retry_after`` on the error, else its ``retry-after-ms`` / ``Retry-After``."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime

from llmplex.errors import LLMError

__all__ = ["requested_wait"]


def requested_wait(error: LLMError, now: Callable[[], float] = time.time) -> float | None:
    """Seconds the provider asked to wait before a retry, or ``None`` when it did not say.

    A classifier that set ``error.retry_after`` wins; otherwise the response headers
    kept on an :class:`~llmplex.errors.LLMAPIError` are read: ``retry-after-ms``
    (milliseconds) first, then ``Retry-After`` as seconds or as an HTTP date.
    """
    explicit = getattr(error, "retry_after", None)
    if explicit is not None:
        return _non_negative(explicit)
    headers: Mapping[str, str] | None = getattr(error, "headers", None)
    if not headers:
        return None
    lowered = {name.lower(): value for name, value in headers.items()}
    millis = _non_negative(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = lowered.get("retry-after")
    seconds = _non_negative(value)
    if seconds is not None or value is None:
        return seconds
    return _seconds_until_http_date(value, now)


def _non_negative(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return max(0.0, number) if math.isfinite(number) else None


def _seconds_until_http_date(value: str, now: Callable[[], float]) -> float | None:
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - now())
