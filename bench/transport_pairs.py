"""The pairing of ``bench/transport.py``'s sync and async measures: each case measured right next to its yardstick
(and in the async tables between two: raw httpx and raw aiohttp), its ratios taken within each group."""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["Paired", "rotations"]


def rotations(names: list[str], rounds: int) -> list[list[str]]:
    """``names`` once per round, each round starting one further along."""
    return [names[r % len(names) :] + names[: r % len(names)] for r in range(rounds)]


@dataclass
class Paired:
    """Each case's figure per measurement, and its ratio to the yardstick measured right next to it (and, where
    there is one, to a second yardstick measured on its other side: raw aiohttp in the async tables)."""

    figures: dict[str, list[float]]
    ratios: dict[str, list[float]]
    beside: dict[str, list[float]] = field(default_factory=dict)
    """Each case's ratios to the second yardstick, one per measurement beside it."""

    @classmethod
    def of(cls, names: list[str], yardstick: str, beside: str | None = None) -> Paired:
        ratios = {name: [1.0] if name == yardstick else [] for name in names}
        second = {name: [1.0] if name == beside else [] for name in names} if beside in names else {}
        return cls({name: [] for name in names}, ratios, second)

    def pairs(self, yardstick: str, rounds: int, beside: str | None = None) -> Iterator[tuple[str, tuple[str, ...]]]:
        """Each round, every case next to the yardstick (and ``beside`` on its other side), in a rotating order,
        the yardstick first every other round, last in the others."""
        group = (yardstick,) if beside is None else (yardstick, beside)
        others = [name for name in self.figures if name not in group]
        for number, order in enumerate(rotations(others, rounds)):
            for name in order:
                measured = (group[0], name, *group[1:])
                yield name, measured if number % 2 == 0 else measured[::-1]

    def add(self, name: str, yardstick: str, figures: dict[str, float], beside: str | None = None) -> None:
        """One group's figures: ``name``'s, the yardstick's and (``beside``) the second yardstick's."""
        for measured, figure in figures.items():
            self.figures[measured].append(figure)
        self.ratios[name].append(figures[name] / figures[yardstick])
        if beside is not None:
            self.beside[name].append(figures[name] / figures[beside])
            self.ratios[beside].append(figures[beside] / figures[yardstick])
            self.beside[yardstick].append(figures[yardstick] / figures[beside])

    def ratio(self, name: str) -> float:
        return statistics.median(self.ratios[name])

    def median(self, name: str) -> float:
        return statistics.median(self.figures[name])

    def ratio_beside(self, name: str) -> float:
        """Median of ``name``'s ratios to the second yardstick measured on its other side."""
        return statistics.median(self.beside[name])
