"""An absolute wall-clock deadline on the monotonic clock."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from llmplex.errors import LLMConfigurationError
from llmplex.reliability.clock import Clock

__all__ = ["Deadline"]


@dataclass(frozen=True)
class Deadline:
    """The monotonic instant by which a request must be done."""

    at: float
    clock: Clock = field(default_factory=Clock)

    @classmethod
    def after(cls, seconds: float, clock: Clock | None = None) -> Deadline:
        """A deadline ``seconds`` from now (``0``: already reached)."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < math.inf:
            raise LLMConfigurationError(f"a deadline needs a finite number of seconds >= 0, got {seconds!r}")
        clock = clock or Clock()
        return cls(clock.monotonic() + seconds, clock)

    def remaining(self) -> float:
        """Seconds left (never negative)."""
        return max(0.0, self.at - self.clock.monotonic())

    @property
    def expired(self) -> bool:
        """Whether no time is left."""
        return self.clock.monotonic() >= self.at
