"""The ``llmplex`` command with a slowed-down mock provider, for interrupt-and-resume tests.

Environment: ``SLOW_MOCK_DELAY`` (seconds each answer takes) and ``SLOW_MOCK_LOG``
(a file that gets one line per request the mock receives: its prompt).
"""

from __future__ import annotations

import os
from typing import Any

from llmplex.cli.main import main
from llmplex.providers import mock

_take = mock.MockBackend.take
_delay = float(os.environ.get("SLOW_MOCK_DELAY", "0"))
_log = os.environ.get("SLOW_MOCK_LOG")


def _slow_take(self: mock.MockBackend, payload: dict[str, Any]) -> tuple[dict[str, Any], float]:
    raw, _ = _take(self, payload)
    if _log:
        with open(_log, "a", encoding="utf-8") as log:
            log.write(payload["messages"][-1]["content"] + "\n")
    return raw, _delay


mock.MockBackend.take = _slow_take  # type: ignore[method-assign]

if __name__ == "__main__":
    main()
