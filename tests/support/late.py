"""How far past its deadline a call ran on its own account, not counting the time the machine kept it waiting.

The deadline promise is T + 50 ms of llmplex's time. On a loaded 2-core machine the caller's thread can wait
hundreds of milliseconds for a CPU once its deadline timer has expired (measured with every core busy: the run
queue held it 150-670 ms in the slowest of 40 calls, while llmplex needed 0.3-3 ms from waking to raising).
That wait is the scheduler's, whatever the library does, so a wall-clock bound fails on a busy machine and
passes alone.

``Late`` measures the overrun from the first moment the caller could run after the deadline:

- async code: from when the caller's event loop ran a callback scheduled at the deadline (``on_loop()``,
  called from inside the coroutine; an event loop that llmplex blocked would run it late too, which the
  loop-lag checks catch instead);
- blocking code: from the deadline;

and in both, without the time the calling thread spent in the run queue after that (Linux
``/proc/<pid>/task/<tid>/schedstat``), so waiting for anything but a CPU (a lock, a join, a sleep, a slow
close) stays charged. The blocking case reads the run queue last at ``t`` before the deadline, and counts
as queued before the deadline all of ``deadline - t`` the thread may have queued then: what is left out is
never more than the run-queue time after the deadline, so no overrun of the library's own hides behind it.

Where ``schedstat`` is missing (not Linux), the blocking case is the plain wall-clock overrun.

The objects alive when ``Late`` is made are frozen (``gc.freeze``) until ``seconds()``: a garbage collection
the call triggers then walks only what was made since, not the whole heap of the test process. In
sdk-lowest-openai that heap (the parsed OpenAPI spec of tests/contract and more, ~360,000 objects) made one
full collection take 0.4-1.8 s on a loaded machine, holding the GIL: a collection that began past the
deadline, in any thread, charged the call up to 565 ms. The garbage of the call itself is still collected
and charged.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from pathlib import Path

from llmplex import Deadline

__all__ = ["Late"]

_SAMPLE_BEFORE = 0.1
"""Seconds before the deadline from which the caller's run-queue time is read, every millisecond, until it."""


def _queued(thread_id: int) -> float | None:
    """Seconds thread ``thread_id`` of this process has waited for a CPU so far (``None``: not measurable)."""
    try:
        fields = Path(f"/proc/self/task/{thread_id}/schedstat").read_text().split()
    except OSError:
        return None
    return int(fields[1]) / 1e9


class Late:
    """The overrun of one call past ``deadline``; create it just before the call, in the calling thread."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline
        self._caller = threading.get_native_id()
        self._loop_ran: float | None = None
        self._queued_at_ran: float | None = None
        self._queued_before: tuple[float, float] | None = None  # (when it was read, run-queue seconds)
        self._sampled = threading.Event()
        gc.freeze()  # until seconds(): see the module's docstring
        threading.Thread(target=self._sample, name="late-sample", daemon=True).start()

    @classmethod
    def after(cls, seconds: float) -> Late:
        """The overrun of a call about to be made with ``timeout=seconds``: measured from a deadline made a moment
        before the call makes its own, so never later than the call's."""
        return cls(Deadline.after(seconds))

    def _sample(self) -> None:
        time.sleep(max(0.0, self.deadline.at - _SAMPLE_BEFORE - time.monotonic()))
        while (read_at := time.monotonic()) < self.deadline.at:  # the last read before the deadline is kept
            queued = _queued(self._caller)
            self._queued_before = None if queued is None else (read_at, queued)
            time.sleep(0.001)
        self._sampled.set()

    def on_loop(self) -> None:
        """Call from the coroutine that makes the call: notes when this loop first runs after the deadline."""
        asyncio.get_running_loop().call_at(self.deadline.at, self._ran)

    def _ran(self) -> None:
        self._loop_ran = time.monotonic()
        self._queued_at_ran = _queued(self._caller)  # this callback runs on the caller's thread

    def seconds(self) -> float:
        """Seconds from the first moment the caller could run after the deadline until now (call right after
        the call ended)."""
        now = time.monotonic()
        gc.unfreeze()
        self._sampled.wait(max(0.0, self.deadline.at - now) + 1.0)
        queued_now = _queued(self._caller)
        before_since = 0.0  # the longest the thread may have queued between the read and ``since``
        if self._loop_ran is not None:  # read on the caller's thread, at ``since``
            since, queued_then = max(self.deadline.at, self._loop_ran), self._queued_at_ran
        elif self._queued_before is not None:
            since, (read_at, queued_then) = self.deadline.at, self._queued_before
            before_since = self.deadline.at - read_at
        else:
            since, queued_then = self.deadline.at, None
        waited = 0.0 if queued_then is None or queued_now is None else queued_now - queued_then
        return now - since - max(0.0, waited - before_since)

    def describe(self, seconds: float) -> str:
        """The overrun as a message: the charged time and the wall-clock time."""
        wall = time.monotonic() - self.deadline.at
        return f"ended {seconds * 1000:.1f} ms after the deadline on its own account ({wall * 1000:.1f} ms by the wall)"
