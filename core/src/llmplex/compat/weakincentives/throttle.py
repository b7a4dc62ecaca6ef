"""weakincentives' ``ThrottlePolicy``: the same four knobs as llmplex's retry policy, in ``timedelta``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from llmplex.compat.weakincentives.errors import InvalidValueError
from llmplex.reliability.throttle import ThrottlePolicy as EnginePolicy

__all__ = ["ThrottlePolicy", "new_throttle_policy"]


@dataclass(frozen=True)
class ThrottlePolicy:
    """How llmplex retries throttled requests: ``max_attempts`` requests in all (the first included).

    Backoff is exponential from ``base_delay`` with full jitter, each wait capped
    at ``max_delay`` and raised to the provider's ``Retry-After``; retrying stops
    when the waits would pass ``max_total_delay`` or the deadline.
    """

    max_attempts: int = 5
    base_delay: timedelta = timedelta(milliseconds=500)
    max_delay: timedelta = timedelta(seconds=8)
    max_total_delay: timedelta = timedelta(seconds=30)

    def engine_policy(self) -> EnginePolicy:
        """This policy as llmplex's (seconds instead of ``timedelta``)."""
        return EnginePolicy(
            max_attempts=self.max_attempts,
            base_delay=self.base_delay.total_seconds(),
            max_delay=self.max_delay.total_seconds(),
            max_total_delay=self.max_total_delay.total_seconds(),
        )


def new_throttle_policy(
    *,
    max_attempts: int = 5,
    base_delay: timedelta = timedelta(milliseconds=500),
    max_delay: timedelta = timedelta(seconds=8),
    max_total_delay: timedelta = timedelta(seconds=30),
) -> ThrottlePolicy:
    """A validated ``ThrottlePolicy``: at least one attempt and positive delays."""
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
        raise InvalidValueError(f"Throttle max_attempts must be at least 1, got {max_attempts!r}")
    for name, value in (("base_delay", base_delay), ("max_delay", max_delay), ("max_total_delay", max_total_delay)):
        if not isinstance(value, timedelta) or value <= timedelta(0):
            raise InvalidValueError(f"Throttle {name} must be a positive timedelta, got {value!r}")
    return ThrottlePolicy(max_attempts, base_delay, max_delay, max_total_delay)
