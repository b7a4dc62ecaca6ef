"""A clock for deadlines that should count from a moment the test picks, not from the call's start.

    clock = StandingClock()
    deadline = Deadline.after(2.0, clock.as_clock())   # 2 s from clock.run(), not from now
    ...                                                # the call starts; time stands still for the deadline
    clock.run()                                        # e.g. at the first event: from here the 2 s pass

On a loaded machine the part before ``run()`` (a first import, a first event) may take longer than the deadline;
the test is about what comes after it. The clock runs by itself after ``limit`` seconds, so a ``run()`` that
never comes cannot hang a test.
"""

from __future__ import annotations

import time

from llmplex.reliability.clock import Clock

__all__ = ["StandingClock"]


class StandingClock:
    """Monotonic seconds that stand still at 0 until ``run()`` (or ``limit`` seconds), then pass as real ones."""

    def __init__(self, limit: float = 60.0) -> None:
        self._made = time.monotonic()
        self._limit = limit
        self._since: float | None = None

    def run(self) -> None:
        """Start the clock (once: later calls change nothing)."""
        if self._since is None:
            self._since = time.monotonic()

    def monotonic(self) -> float:
        """0 until ``run()``, then the seconds since."""
        if self._since is None and time.monotonic() - self._made > self._limit:
            self.run()
        return 0.0 if self._since is None else time.monotonic() - self._since

    def as_clock(self) -> Clock:
        """A ``Clock`` reading this one's time (sleeps and draws as usual)."""
        return Clock(monotonic=self.monotonic)
