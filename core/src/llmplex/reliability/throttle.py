"""How long to wait before retrying a retryable failure — or whether to stop, and why."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from llmplex.config.schema import ThrottleConfig
from llmplex.errors import LLMConfigurationError, LLMError

__all__ = ["RetryDecision", "ThrottlePolicy"]


class RetryDecision(NamedTuple):
    """``delay`` seconds to wait before the next attempt, or ``None`` to give up for ``reason``."""

    delay: float | None
    reason: str


@dataclass(frozen=True)
class ThrottlePolicy:
    """Exponential backoff with full jitter, bounded per wait and in total.

    The retry after attempt ``n`` waits a uniform draw in
    ``[0, min(max_delay, base_delay * 2**(n-1))]``, raised to the wait the
    provider asked for (``Retry-After`` / ``retry-after-ms``). A wait that would
    pass ``max_total_delay`` or the deadline is not started: the last error is
    raised at once. Only errors whose class is ``retryable`` are retried.

    Where a policy comes from, later wins: the defaults below, the config's
    ``[throttle]`` table, ``[throttle.providers.<prefix>]`` for one provider
    instance, and ``throttle=`` on a call (a policy, or a mapping of the fields
    to change).
    """

    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_total_delay: float = 30.0

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise LLMConfigurationError(
                f"throttle max_attempts must be a whole number >= 1 (1 means no retries), got {self.max_attempts!r}"
            )
        for name in ("base_delay", "max_delay", "max_total_delay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise LLMConfigurationError(f"throttle {name} must be a finite number of seconds >= 0, got {value!r}")

    @classmethod
    def from_config(cls, config: ThrottleConfig, provider: str | None = None) -> ThrottlePolicy:
        """The policy of the config's ``[throttle]`` table, with ``[throttle.providers.<provider>]`` applied."""
        fields = config.model_dump(exclude={"providers"})
        override = config.providers.get(provider) if provider is not None else None
        if override is not None:
            fields.update(override.model_dump(exclude_none=True))
        return cls(**fields)

    def replace(self, changes: Mapping[str, Any]) -> ThrottlePolicy:
        """This policy with some fields changed (``throttle={"max_attempts": 1}`` on a call)."""
        names = [f.name for f in dataclasses.fields(self)]
        unknown = sorted(set(changes) - set(names))
        if unknown:
            raise LLMConfigurationError(
                f"unknown throttle setting {', '.join(map(repr, unknown))}; valid settings: {', '.join(names)}"
            )
        return dataclasses.replace(self, **changes)

    def decide(
        self, error: LLMError, attempt: int, waited: float, draw: float, remaining: float | None = None
    ) -> RetryDecision:
        """Whether, and after how long, to send attempt ``attempt + 1`` after ``error``.

        ``waited`` is the total already waited for this request, ``draw`` a uniform
        number in [0, 1), ``remaining`` the seconds left before the deadline.
        """
        if not error.retryable:
            return RetryDecision(None, "not retryable")
        if attempt >= self.max_attempts:
            return RetryDecision(None, f"max_attempts ({self.max_attempts}) reached")
        wait = draw * min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        asked: float | None = getattr(error, "retry_after", None)
        if asked is not None and asked > wait:
            wait = asked
        if waited + wait > self.max_total_delay:
            return RetryDecision(None, f"waiting {wait:.3g}s more would pass max_total_delay ({self.max_total_delay}s)")
        if remaining is not None and wait >= remaining:
            return RetryDecision(None, f"waiting {wait:.3g}s would pass the deadline ({remaining:.3g}s left)")
        return RetryDecision(wait, "retryable")
