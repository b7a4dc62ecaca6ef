"""The wait a provider asked for: an explicit value, else its ``retry-after-ms`` / ``Retry-After`` headers."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime

__all__ = ["requested_wait"]


def requested_wait(
    retry_after: object, headers: Mapping[str, str] | None, now: Callable[[], float] = time.time
) -> float | None:
    """Seconds a provider asked to wait before a retry, or ``None`` when it did not say.

    An explicit ``retry_after`` (a classifier read it from the body) wins; otherwise
    the response headers are read: ``retry-after-ms`` (milliseconds) first, then
    ``Retry-After`` as seconds or as an HTTP date. Rate-limit and server errors call
    this when they are built, so every plugin gets the same reading.
    """
    explicit = _non_negative(retry_after)
    if explicit is not None or not headers:
        return explicit
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
