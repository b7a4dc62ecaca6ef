"""The order in which a call tries a group's usable deployments, per strategy.

Every strategy starts from a random order by weight (a deployment with weight 3
comes first three times as often as one with weight 1) and then sorts it,
stably, by what it cares about, so ties stay spread by weight:

- ``weighted``: the random order itself;
- ``least-busy``: fewest calls in flight first;
- ``latency``: lowest recent latency first (an unmeasured deployment counts as
  fastest, so it gets measured); one call in ``EXPLORE`` keeps the random order;
- ``headroom``: most of its rpm/tpm windows left first.

Deployments of weight 0 are spares: they come after every other one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from llmplex.routing.health import DeploymentState

__all__ = ["EXPLORE", "Candidate", "ordered"]

C = TypeVar("C", bound="Candidate")

EXPLORE = 0.05
"""Share of ``latency`` calls that try deployments in random order by weight, so slow ones get remeasured."""


class Candidate(Protocol):
    """What a strategy reads of a deployment."""

    @property
    def weight(self) -> float: ...

    def headroom(self) -> float: ...


def ordered(strategy: str, candidates: Sequence[tuple[C, DeploymentState]], draw: Callable[[], float]) -> list[C]:
    """``candidates`` (each with its state) in the order ``strategy`` tries them; ``draw`` gives numbers in [0, 1)."""
    spread = _by_weight([c for c in candidates if c[0].weight > 0], draw)
    spares = [c for c in candidates if c[0].weight <= 0]
    if strategy == "least-busy":
        spread.sort(key=lambda c: c[1].busy)
    elif strategy == "latency":
        if draw() >= EXPLORE:
            spread.sort(key=lambda c: c[1].latency or 0.0)
    elif strategy == "headroom":
        shares = {id(c[0]): c[0].headroom() for c in spread}
        spread.sort(key=lambda c: -shares[id(c[0])])
    return [c[0] for c in (*spread, *spares)]


def _by_weight(items: list[tuple[C, DeploymentState]], draw: Callable[[], float]) -> list[tuple[C, DeploymentState]]:
    """``items`` in a random order where each next one is drawn with probability proportional to its weight."""
    left = list(items)
    order: list[tuple[C, DeploymentState]] = []
    while left:
        total = sum(item[0].weight for item in left)
        point = draw() * total
        chosen = len(left) - 1
        for i, item in enumerate(left):
            point -= item[0].weight
            if point < 0:
                chosen = i
                break
        order.append(left.pop(chosen))
    return order
