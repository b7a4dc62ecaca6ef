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
