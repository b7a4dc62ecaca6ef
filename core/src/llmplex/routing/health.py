"""How each deployment of a group is doing: cooldowns, failures in a row, calls in flight, recent latency.

A ``Board`` keeps these figures under one key per deployment (the group's name
and the deployment's model string). ``MemoryBoard`` keeps them in this
process (``[limits] storage = "memory://"``); ``llmplex.routing.shared_health``
keeps them in Redis, so every process and replica sees the same cooldowns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol

__all__ = ["LATENCY_WEIGHT", "Board", "CoolRule", "DeploymentState", "MemoryBoard", "Outcome"]

LATENCY_WEIGHT = 0.3
"""Weight of the newest latency in the moving average the ``latency`` strategy reads."""

Outcome = Literal["ok", "failed", "neutral"]
"""How an attempt ended for its deployment: answered, failed retryably, or neither (refused, cancelled, ...)."""


class DeploymentState(NamedTuple):
    """One deployment as a call sees it when it picks: seconds until it comes back (0: usable now), calls in
    flight, and its recent latency in seconds (``None``: not measured yet)."""

    cooling: float
    busy: int
    latency: float | None


@dataclass(frozen=True)
class CoolRule:
    """When failures cool a deployment: ``allowed_fails`` in a row sit it out ``cooldown`` seconds (or what a
    429 asked for, if longer)."""

    allowed_fails: int
    cooldown: float


class Board(Protocol):
    """Where a group's deployment figures live."""

    def read(self, keys: Sequence[str], wait: float | None) -> list[DeploymentState]:
        """The state of each key, in order, waiting at most ``wait`` seconds for a shared store."""
        ...

    def started(self, key: str) -> None:
        """A call to ``key`` is in flight."""
        ...

    def ended(self, key: str, outcome: Outcome, latency: float | None, rule: CoolRule, asked: float | None) -> float:
        """A call to ``key`` ended (``latency``: its time; for an attempt that lost a hedge race, a lower bound);
        returns the seconds it now cools for (0: it does not)."""
        ...


class _Entry:
    __slots__ = ("busy", "cool_until", "fails", "latency")

    def __init__(self) -> None:
        self.fails = 0
        self.cool_until = 0.0
        self.busy = 0
        self.latency: float | None = None


class MemoryBoard:
    """The figures of this process, timed by ``monotonic`` (the client's clock)."""

    def __init__(self, monotonic: Callable[[], float]) -> None:
        self.monotonic = monotonic
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def _entry(self, key: str) -> _Entry:
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries.setdefault(key, _Entry())
        return entry

    def read(self, keys: Sequence[str], wait: float | None = None) -> list[DeploymentState]:
        """The state of each key (no waiting: nothing is shared)."""
        now = self.monotonic()
        states = []
        for key in keys:
            entry = self._entry(key)
            states.append(DeploymentState(max(0.0, entry.cool_until - now), entry.busy, entry.latency))
        return states

    def started(self, key: str) -> None:
        """One more call in flight to ``key``."""
        with self._lock:
            self._entry(key).busy += 1

    def ended(self, key: str, outcome: Outcome, latency: float | None, rule: CoolRule, asked: float | None) -> float:
        """One call fewer in flight; a success clears the failures in a row, a retryable failure counts one and
        cools the deployment when they reach ``rule.allowed_fails``. ``latency`` moves the average on a success,
        and otherwise (a lost hedge race: the time it ran without answering) only when it is longer."""
        with self._lock:
            entry = self._entry(key)
            entry.busy = max(0, entry.busy - 1)
            if latency is not None and (outcome == "ok" or entry.latency is None or latency > entry.latency):
                entry.latency = latency if entry.latency is None else _averaged(entry.latency, latency)
            if outcome == "ok":
                entry.fails = 0
                return 0.0
            if outcome != "failed":
                return 0.0
            entry.fails += 1
            if entry.fails < rule.allowed_fails or rule.cooldown <= 0:
                return 0.0
            entry.fails = 0
            seconds = max(rule.cooldown, asked or 0.0)
            entry.cool_until = max(entry.cool_until, self.monotonic() + seconds)
            return seconds

    def cool(self, key: str, seconds: float) -> None:
        """Make ``key`` sit out ``seconds`` (what another process decided, mirrored here)."""
        with self._lock:
            entry = self._entry(key)
            entry.cool_until = max(entry.cool_until, self.monotonic() + seconds)


def _averaged(old: float, new: float) -> float:
    return old + LATENCY_WEIGHT * (new - old)
