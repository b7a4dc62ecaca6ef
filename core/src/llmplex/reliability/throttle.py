"""How long to wait before retrying a retryable failure — or whether to stop."""

from __future__ import annotations

from dataclasses import dataclass

from llmplex.config.schema import ThrottleConfig
from llmplex.errors import LLMError

__all__ = ["ThrottlePolicy"]


@dataclass(frozen=True)
class ThrottlePolicy:
    """Exponential backoff with full jitter, bounded per wait and in total.

    The n-th retry waits a uniform draw in ``[0, min(max_delay, base_delay * 2**(n-1))]``,
    raised to the ``retry_after`` the provider asked for. A wait that would
    pass ``max_total_delay`` is not started.
    """

    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_total_delay: float = 30.0

    @classmethod
    def from_config(cls, config: ThrottleConfig) -> ThrottlePolicy:
        """The policy a config's ``[throttle]`` table describes."""
        return cls(**config.model_dump())

    def delay(self, error: LLMError, attempt: int, waited: float, draw: float) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or ``None`` to give up.

        ``waited`` is the total already waited; ``draw`` a uniform number in [0, 1).
        """
        if not error.retryable or attempt >= self.max_attempts:
            return None
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        wait = draw * ceiling
        retry_after: float | None = getattr(error, "retry_after", None)
        if retry_after is not None:
            wait = max(wait, float(retry_after))
        if waited + wait > self.max_total_delay:
            return None
        return wait
