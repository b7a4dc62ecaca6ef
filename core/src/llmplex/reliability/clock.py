"""Time and randomness behind the retry loop, injectable so tests are exact and fast."""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

__all__ = ["Clock"]

_DRAWS = random.Random()
"""The generator of every ``Clock`` not given its own ``random``: seeded once per process, not per clock (seeding
reads the system's entropy, about 20 µs, and ``Deadline.after`` makes a clock for each deadline it is not given
one for), and again in a forked child, as the ``random`` module's own generator is."""
if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_DRAWS.seed)


@dataclass(frozen=True)
class Clock:
    """``monotonic`` reads seconds; ``sleep``/``asleep`` wait; ``random`` draws in [0, 1)."""

    monotonic: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    asleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    random: Callable[[], float] = _DRAWS.random
