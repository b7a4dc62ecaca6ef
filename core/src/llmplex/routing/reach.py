"""Whether the ``[limits]`` Redis answered lately: one record for every look a group table's health board and
rpm/tpm windows take at it, so that a Redis that stopped answering costs one wait, not one per look."""

from __future__ import annotations

import threading
import time

__all__ = ["FIRST_WAIT", "LOCAL_SECONDS", "SHARED_WAIT", "Reach"]

SHARED_WAIT = 1.0
"""Longest wait (seconds) for one look at Redis before routing goes on with local figures."""
FIRST_WAIT = 5.0
"""Longest wait for the first look, which imports the Redis client and connects."""
LOCAL_SECONDS = 5.0
"""How long routing keeps to local figures after Redis failed to answer."""


class Reach:
    """When Redis last failed to answer, and whether it ever answered."""

    def __init__(self) -> None:
        self.connected = False
        self._local_until = 0.0
        self._lock = threading.Lock()

    @property
    def local(self) -> bool:
        """Whether looks go to local figures now (Redis failed less than ``LOCAL_SECONDS`` ago)."""
        return time.monotonic() < self._local_until

    def wait(self, wait: float | None) -> float:
        """The seconds the next look may take: ``SHARED_WAIT`` (``FIRST_WAIT`` before Redis first answered),
        or ``wait`` when less."""
        most = SHARED_WAIT if self.connected else FIRST_WAIT
        return most if wait is None else max(0.0, min(wait, most))

    def failed(self) -> bool:
        """Redis did not answer: local figures for ``LOCAL_SECONDS``; whether it answered until now."""
        with self._lock:
            first = not self.local
            self._local_until = time.monotonic() + LOCAL_SECONDS
        return first
