"""Test doubles for the reliability suite: a clock that moves only when slept on, an event recorder."""

from __future__ import annotations

import threading
from typing import Any

import llmplex
from llmplex import Clock, hookimpl


class FakeTime:
    """Monotonic time that advances only by the sleeps core asks for; every sleep is recorded."""

    def __init__(self, draw: float = 0.5) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self.draw = draw
        self._lock = threading.Lock()

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)

    def clock(self) -> Clock:
        return Clock(monotonic=lambda: self.now, sleep=self.sleep, asleep=self.asleep, random=lambda: self.draw)


class Recorder:
    """An observer plugin keeping every event it sees."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    @hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [type(e).__name__ for e in self.events]

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]
