"""Issue 34 item 3 (its Ctrl-C test, `test_item_3_core_ctrl_c_while_a_sync_caller_waits...`, failed under load):
a sync caller interrupted at any point of handing its call to the bridge loop cancels that call.

``run_on_loop`` took its future from ``asyncio.run_coroutine_threadsafe`` and only then entered the ``try`` that
cancels it on an interrupt. A Ctrl-C landing in between (the loop's thread already running the call, the
caller's thread not yet past the assignment) left the call running on the loop with nobody waiting for it: the
subprocess test saw it 3 times in about 100 runs beside three busy loops. Now the answer's future exists before
anything is scheduled. Deterministic here: the loop's ``call_soon_threadsafe`` schedules the call, then the
caller is interrupted inside it, the latest point before the wait.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from llmplex.engine import bridge


class _InterruptedWhileScheduling:
    """The bridge loop, except that handing it a callback interrupts the caller right after it is scheduled."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def call_soon_threadsafe(self, callback: Any, *args: Any) -> Any:
        self.loop.call_soon_threadsafe(callback, *args)
        raise KeyboardInterrupt

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loop, name)


def test_item_3_core_ctrl_c_while_handing_a_call_to_the_bridge_loop_cancels_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = bridge._background_loop()
    monkeypatch.setattr(bridge, "_background_loop", lambda: _InterruptedWhileScheduling(loop))
    began, ended = threading.Event(), threading.Event()
    outcome: list[str] = []

    async def work() -> None:
        began.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        finally:
            ended.set()

    with pytest.raises(KeyboardInterrupt):
        bridge.run_on_loop(work)
    monkeypatch.undo()
    # the loop runs what was scheduled before this: afterwards the call either never began or was cancelled,
    # never left waiting with nobody to answer
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result(timeout=60)
    if began.is_set():
        assert ended.wait(60), "the interrupted call still runs on the bridge loop"
        assert outcome == ["cancelled"]
