"""Cache writes held back until the caller accepts the answer (its structured output validated).

An answer that fails ``output=`` validation must never be replayed from the
cache. Code that validates answers runs their calls inside ``held_writes()``:
while it is open, the response cache hands its writes to the block instead of
storing them, and the block ``commit()``s them once the answer is accepted, or
``drop()``s them. It is a context variable, so each thread and task holds its
own; the parse step runs in the caller's thread or task, where it is set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["HeldWrites", "held_writes", "hold"]


class HeldWrites:
    """The cache writes of the answers one block is still validating."""

    def __init__(self) -> None:
        self._writes: list[Callable[[], None]] = []

    def add(self, write: Callable[[], None]) -> None:
        """Keep ``write`` until ``commit`` or ``drop``."""
        self._writes.append(write)

    def commit(self) -> None:
        """Store what is held: the answers were accepted."""
        writes, self._writes = self._writes, []
        for write in writes:
            write()

    def drop(self) -> None:
        """Forget what is held: an answer was rejected."""
        self._writes.clear()


_held: ContextVar[HeldWrites | None] = ContextVar("llmplex_cache_held_writes", default=None)


@contextmanager
def held_writes() -> Iterator[HeldWrites]:
    """Hold the response cache's writes made in this block (this thread or task); what is not committed is
    dropped when it ends."""
    writes = HeldWrites()
    token = _held.set(writes)
    try:
        yield writes
    finally:
        _held.reset(token)
        writes.drop()


def hold(write: Callable[[], None]) -> bool:
    """Hand ``write`` to the open ``held_writes`` block, if any (``False``: none is open, write now)."""
    writes = _held.get()
    if writes is None:
        return False
    writes.add(write)
    return True
