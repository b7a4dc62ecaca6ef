"""Issue 14 item 1: the kit's event-loop detector sees blocking calls inside coroutines, and only those."""

from __future__ import annotations

import asyncio
import time

from llmplex.testing.loop_lag import LoopLag


async def _held(coroutine_blocks: bool) -> float:
    async with LoopLag() as lag:
        if coroutine_blocks:
            time.sleep(0.4)  # noqa: ASYNC251 - what sync I/O in an async hook does to the loop
        else:
            await asyncio.sleep(0.4)
    return lag.worst


def test_item_1_blocking_inside_a_coroutine_shows_as_lag() -> None:
    assert asyncio.run(_held(coroutine_blocks=True)) >= 0.3


def test_item_1_awaiting_does_not() -> None:
    assert asyncio.run(_held(coroutine_blocks=False)) < 0.2


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_item_1_a_collection_in_the_block_does_not_walk_the_heap_from_before() -> None:
    """A full collection of a large heap holds the GIL for a second or more, in whichever thread it runs: the
    objects alive on entry are frozen, so a collection in the block walks only what was made since (here: an
    unreachable cycle made before survives a collection in the block, and one made in it does not)."""
    import gc
    import weakref

    async def main() -> tuple[bool, bool, int]:
        before = weakref.ref(_Cycle())
        async with LoopLag():
            during = weakref.ref(_Cycle())
            await asyncio.to_thread(gc.collect)
            kept, freed = before() is not None, during() is None
        return kept, freed, gc.get_freeze_count()

    gc.collect()
    gc.disable()  # no automatic collection between making the cycle and entering
    try:
        kept, freed, frozen_after = asyncio.run(main())
    finally:
        gc.enable()
    assert kept and freed and frozen_after == 0
