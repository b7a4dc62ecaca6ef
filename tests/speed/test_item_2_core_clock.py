"""Issue 34 item 2: a ``Clock`` made without its own ``random`` (as ``Deadline.after`` makes one for every deadline
it is not given a clock for: ``llmplex.complete(timeout=...)``, ``deadline=Deadline.after(30)``, the gateway's
store calls) draws from one generator of the process instead of seeding a generator of its own from the
system's entropy (about 20 µs each). The draws are still in [0, 1) and a forked child draws its own sequence."""

from __future__ import annotations

import os
import random
import sys
from typing import Any

import pytest

from llmplex.reliability.clock import Clock
from llmplex.reliability.deadline import Deadline


@pytest.fixture
def seeds(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every generator seeded while the test runs."""
    seeded: list[Any] = []
    seed = random.Random.seed

    def counted(self: random.Random, *args: Any, **kwargs: Any) -> None:
        seeded.append(args)
        seed(self, *args, **kwargs)

    monkeypatch.setattr(random.Random, "seed", counted)
    return seeded


def test_item_2_a_clock_or_a_deadline_seeds_no_generator(seeds: list[Any]) -> None:
    clocks = [Clock(), Clock(monotonic=lambda: 5.0), Deadline.after(30).clock, Deadline.after(1, since=0.0).clock]
    assert seeds == []
    draws = [clock.random() for clock in clocks for _ in range(50)]
    assert all(0 <= draw < 1 for draw in draws) and len(set(draws)) == len(draws)


def test_item_2_a_clock_given_its_own_random_keeps_it() -> None:
    drawn = random.Random(7).random
    assert Clock(random=drawn).random is drawn
    assert Clock(random=lambda: 0.25).random() == 0.25


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_item_2_a_forked_child_draws_its_own_sequence() -> None:
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its first draws, then out without pytest's exit handlers
        try:
            os.write(writing, repr([Clock().random() for _ in range(4)]).encode())
        finally:
            os._exit(0)
    os.close(writing)
    with os.fdopen(reading) as pipe:
        child = pipe.read()
    os.waitpid(pid, 0)
    parent = repr([Clock().random() for _ in range(4)])
    assert child.startswith("[") and child != parent, sys.platform
