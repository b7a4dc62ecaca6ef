"""Time and randomness behind the retry loop, injectable so tests are exact and fast."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

__all__ = ["Clock"]


@dataclass(frozen=True)
class Clock:
    """``monotonic`` reads seconds; ``sleep``/``asleep`` wait; ``random`` draws in [0, 1)."""

    monotonic: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    asleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    random: Callable[[], float] = field(default_factory=lambda: random.Random().random)
