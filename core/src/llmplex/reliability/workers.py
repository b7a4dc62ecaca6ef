"""Daemon worker threads that run blocking code a caller may abandon at its deadline.

Unlike ``asyncio.to_thread`` or a ``ThreadPoolExecutor``, nothing waits for
these threads: not ``asyncio.run`` when it shuts its loop down, not the
interpreter at exit. A function overrunning its caller's deadline keeps its
thread until it returns by itself, and the caller is long gone. Idle threads
are reused (starting one costs ~10x a hand-over) and end after a minute.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["submit"]

T = TypeVar("T")

IDLE_SECONDS = 60.0

_Job = tuple[Callable[[], Any], "Future[Any]"]
_idle: list[queue.SimpleQueue[_Job]] = []
_lock = threading.Lock()


def submit(fn: Callable[[], T]) -> Future[T]:
    """Run ``fn()`` on a worker thread, in a copy of the caller's context; its future says how it ended."""
    future: Future[T] = Future()
    context = contextvars.copy_context()
    job: _Job = (lambda: context.run(fn), future)
    with _lock:
        inbox = _idle.pop() if _idle else None
    if inbox is None:
        inbox = queue.SimpleQueue()
        threading.Thread(target=_work, args=(inbox,), name="llmplex-worker", daemon=True).start()
    inbox.put(job)
    return future


def _work(inbox: queue.SimpleQueue[_Job]) -> None:
    while True:
        try:
            fn, future = inbox.get(timeout=IDLE_SECONDS)
        except queue.Empty:
            with _lock:
                if inbox in _idle:  # not handed a job meanwhile: retire
                    _idle.remove(inbox)
                    return
            continue
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(fn())
            except BaseException as exc:  # handed to whoever waits on the future
                future.set_exception(exc)
        del fn, future
        with _lock:
            _idle.append(inbox)
