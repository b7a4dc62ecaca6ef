"""weakincentives' ``ThrottlePolicy``: the same four knobs as llmplex's retry policy, in ``timedelta``."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from datetime import timedelta

from llmplex.compat.weakincentives.errors import InvalidValueError, ThrottleDetails, ThrottleError, ThrottleKind
from llmplex.compat.weakincentives.provider_errors import throttle_details
from llmplex.reliability.throttle import ThrottlePolicy as EnginePolicy

__all__ = [
    "ThrottleDetails",
    "ThrottleError",
    "ThrottleKind",
    "ThrottlePolicy",
    "jittered_backoff",
    "new_throttle_policy",
    "sleep_for",
    "throttle_details",
]


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


def sleep_for(delay: timedelta) -> None:
    """Sleep ``delay`` (weakincentives' helper; llmplex's retry loop waits on its own clock)."""
    time.sleep(delay.total_seconds())


def jittered_backoff(*, policy: ThrottlePolicy, attempt: int, retry_after: timedelta | None) -> timedelta:
    """weakincentives' wait before retry ``attempt``: a uniform draw up to the capped exponential delay (or the
    provider's ``retry_after`` when longer), never below ``base_delay`` nor ``retry_after``.

    llmplex's own retries draw from ``[0, cap]`` raised to ``Retry-After`` (see the fidelity page); this
    stays for code that computes waits itself.
    """
    capped = min(policy.max_delay, policy.base_delay * 2 ** max(attempt - 1, 0))
    base = max(capped, retry_after or timedelta(0))
    if base <= timedelta(0):
        return policy.base_delay
    delay = max(timedelta(seconds=random.uniform(0, base.total_seconds())), policy.base_delay)
    return retry_after if retry_after is not None and delay < retry_after else delay
