"""The ``llmplex`` command with a slowed-down mock provider, for interrupt-and-resume tests.

Environment: ``SLOW_MOCK_DELAY`` (seconds each answer takes), ``SLOW_MOCK_LOG``
(a file that gets one line per request the mock receives: its prompt) and ``SLOW_MOCK_HOLD_AFTER``
(from that many requests on, each answer is held 5 s: the run cannot end before the test interrupts it, however
slow the machine that runs the test is). Ctrl-C is Python's ``KeyboardInterrupt`` here even when the test runs
under a shell that ignores SIGINT (a non-interactive shell's background job does, and its children inherit that).
"""

from __future__ import annotations

import itertools
import os
import signal
from typing import Any

from llmplex.cli.main import main
from llmplex.providers import mock

_take = mock.MockBackend.take
_delay = float(os.environ.get("SLOW_MOCK_DELAY", "0"))
_log = os.environ.get("SLOW_MOCK_LOG")
_hold_after = int(os.environ.get("SLOW_MOCK_HOLD_AFTER", "0")) or None
_received = itertools.count(1)
_HOLD_SECONDS = 5.0


def _slow_take(self: mock.MockBackend, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
    raw, _ = _take(self, payload)
    if _log:
        with open(_log, "a", encoding="utf-8") as log:
            log.write(payload["messages"][-1]["content"] + "\n")
    if _hold_after is not None and next(_received) > _hold_after:
        return raw, _HOLD_SECONDS
    return raw, _delay


mock.MockBackend.take = _slow_take  # type: ignore[method-assign]
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, whatever this process inherited

if __name__ == "__main__":
    main()
