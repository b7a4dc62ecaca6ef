"""The pairing of ``bench/transport.py``'s sync and async measures: each case measured right next to its yardstick
(and in the async tables between two: raw httpx and raw aiohttp on a pool the size of the case's client's), its
ratios taken within each group; and which yardstick each case is measured against."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

__all__ = ["AIOHTTP", "AIOHTTP_SDK_POOL", "Paired", "aiohttp_yardstick", "rotations", "sync_yardstick"]

AIOHTTP = "raw aiohttp"
"""Raw aiohttp on aiohttp's default pool: at most 100 connections, as the Gemini plugin's client (httpx-aiohttp's)."""
AIOHTTP_SDK_POOL = "raw aiohttp (SDKs' pool)"
"""Raw aiohttp on the pool of the openai and anthropic SDKs' aiohttp clients (``DefaultAioHttpClient``: 1,000
connections), so that at 256 in flight it, like them, has every call on the wire instead of 156 waiting for one of
100 connections."""
_OWN_POOL = ("raw ", "litellm", "gemini")
"""Cases not on an openai or anthropic SDK client: raw clients, litellm, and llmplex-gemini (100 connections)."""


def sync_yardstick(name: str) -> str:
    """Sync case ``name``'s yardstick: raw httpx posting the same JSON to its API (a raw case's: ``raw httpx``)."""
    if name.startswith("raw "):
        return "raw httpx"
    wire = next((wire for wire in ("gemini", "azure", "responses") if wire in name), None)
    if wire is None and "anthropic" in name:
        wire = "messages"
    return f"raw httpx ({wire})" if wire else "raw httpx"


def aiohttp_yardstick(name: str) -> str | None:
    """Async case ``name``'s raw aiohttp: on a pool the size of its client's (``None`` for raw aiohttp itself)."""
    if name == AIOHTTP:
        return None
    if name == AIOHTTP_SDK_POOL or any(mark in name for mark in _OWN_POOL):
        return AIOHTTP
    return AIOHTTP_SDK_POOL


def rotations(names: list[str], rounds: int) -> list[list[str]]:
    """``names`` once per round, each round starting one further along."""
    return [names[r % len(names) :] + names[: r % len(names)] for r in range(rounds)]


def _no_second(name: str) -> str | None:
    return None


@dataclass
class Paired:
    """Each case's figure per measurement, and its ratio to the yardstick measured right next to it (and, where
    there is one, to its second yardstick measured on its other side: raw aiohttp in the async tables)."""

    figures: dict[str, list[float]]
    ratios: dict[str, list[float]]
    beside: dict[str, list[float]] = field(default_factory=dict)
    """Each case's ratios to its second yardstick, one per measurement beside it."""
    seconds: dict[str, str] = field(default_factory=dict)
    """Each case's second yardstick (the yardstick's own: what its ratio beside is taken to)."""

    @classmethod
    def of(cls, names: list[str], yardstick: str, second: Callable[[str], str | None] = _no_second) -> Paired:
        """The cases ``names``, each paired with ``yardstick`` and with ``second(name)`` where that is in ``names``."""
        seconds = {name: other for name in names if (other := second(name)) in names and other != name}
        beside = {name: [] for name in seconds} | {name: [1.0] for name in set(seconds.values()) - seconds.keys()}
        ratios = {name: [1.0] if name == yardstick else [] for name in names}
        return cls({name: [] for name in names}, ratios, beside, seconds)

    def pairs(self, yardstick: str, rounds: int) -> Iterator[tuple[str, tuple[str, ...]]]:
        """Each round, every case next to the yardstick (and its second yardstick on its other side), in a rotating
        order, the yardstick first every other round, last in the others. A second yardstick that has no second of
        its own is measured only beside the cases it is the second of."""
        only_seconds = {other for other in self.seconds.values() if other not in self.seconds}
        others = [name for name in self.figures if name != yardstick and name not in only_seconds]
        for number, order in enumerate(rotations(others, rounds)):
            for name in order:
                second = self.seconds.get(name)
                measured = (yardstick, name) if second is None else (yardstick, name, second)
                yield name, measured if number % 2 == 0 else measured[::-1]

    def add(self, name: str, yardstick: str, figures: dict[str, float]) -> None:
        """One group's figures: ``name``'s, the yardstick's and (where ``name`` has one) its second yardstick's."""
        for measured, figure in figures.items():
            self.figures[measured].append(figure)
        self.ratios[name].append(figures[name] / figures[yardstick])
        second = self.seconds.get(name)
        if second is not None:
            self.beside[name].append(figures[name] / figures[second])
            self.ratios[second].append(figures[second] / figures[yardstick])
            if self.seconds.get(yardstick) == second:
                self.beside[yardstick].append(figures[yardstick] / figures[second])

    def ratio(self, name: str) -> float:
        return statistics.median(self.ratios[name])

    def median(self, name: str) -> float:
        return statistics.median(self.figures[name])

    def ratio_beside(self, name: str) -> float:
        """Median of ``name``'s ratios to its second yardstick measured on its other side."""
        return statistics.median(self.beside[name])
