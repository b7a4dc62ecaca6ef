"""Issue 34 item 5: the gateway's JSON log lines (one per request: the access line) cost less to format.

``JSONLogFormatter`` encoded each line with ``json.dumps(entry, default=str)``, which builds a ``JSONEncoder``
anew on every call, and formatted the time with ``time.strftime`` for every line. Now one encoder serves every
line and each second's time text is made once. The lines stay what they were, character for character.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest

from llmplex.gateway.server import JSONLogFormatter

LINE = {
    "request_id": "req_0123456789abcdef",
    "endpoint": "chat.completions",
    "key": "bench",
    "model": "stub:stub-model",
    "status": 200,
    "error_type": None,
    "latency_ms": 1.234,
    "stream": False,
}


def record(created: float, extra: dict[str, Any] | None = None, exc: bool = False) -> logging.LogRecord:
    info = None
    if exc:
        try:
            raise ValueError("broken\nsecond line")
        except ValueError:
            info = sys.exc_info()
    made = logging.getLogger("llmplex.gateway").makeRecord(
        "llmplex.gateway", logging.INFO, __file__, 0, "request %s", ("x",), info, extra=extra or LINE
    )
    made.created = created
    return made


def expected(formatter: logging.Formatter, made: logging.LogRecord) -> str:
    """The line as the formatter wrote it before: ``formatTime`` and ``json.dumps(..., default=str)``."""
    skip = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime", "color_message"}
    entry: dict[str, Any] = {
        "time": formatter.formatTime(made, "%Y-%m-%dT%H:%M:%S"),
        "level": made.levelname.lower(),
        "logger": made.name,
        "message": made.getMessage(),
    }
    entry.update({k: v for k, v in made.__dict__.items() if k not in skip and not k.startswith("_")})
    if made.exc_info:
        entry["error"] = formatter.formatException(made.exc_info).splitlines()[-1]
    return json.dumps(entry, default=str)


def test_item_5_log_lines_are_the_same_as_before() -> None:
    formatter = JSONLogFormatter()
    odd = {**LINE, "cost": Decimal("0.000012"), "at": datetime(2026, 12, 3, 10, 0), "text": 'é\u2028"q"'}
    start = 1_780_000_000.0
    cases = [record(start + step, LINE) for step in (0.0, 0.4, 0.999, 1.0, 59.5, 3600.25, -0.5)]
    cases += [record(start, odd), record(start + 2, LINE, exc=True)]
    for made in cases:
        assert formatter.format(made) == expected(formatter, made)


def test_item_5_a_log_line_builds_no_encoder_and_each_second_is_formatted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    formatter = JSONLogFormatter()
    formatter.format(record(1_780_000_000.5))  # this second's text made
    built, stamped = [], []
    real_init, real_strftime = json.JSONEncoder.__init__, time.strftime

    def counting_init(self: json.JSONEncoder, *args: Any, **kwargs: Any) -> None:
        built.append(kwargs)
        real_init(self, *args, **kwargs)

    def counting_strftime(*args: Any) -> str:
        stamped.append(args)
        return real_strftime(*args)

    monkeypatch.setattr(json.JSONEncoder, "__init__", counting_init)
    monkeypatch.setattr(time, "strftime", counting_strftime)
    lines = [formatter.format(record(1_780_000_000.5 + n / 200)) for n in range(100)]  # the same second
    assert built == [] and stamped == []
    formatter.format(record(1_780_000_001.5))
    assert len(stamped) == 1 and built == []
    assert len(set(lines)) == 1


def test_item_5_a_log_lines_fields_are_picked_once_per_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    from llmplex.gateway import server

    asked: list[str] = []

    class Standard(set[str]):
        def __contains__(self, name: object) -> bool:
            asked.append(str(name))
            return super().__contains__(name)

    monkeypatch.setattr(server, "_STANDARD", Standard(server._STANDARD))
    formatter = JSONLogFormatter()
    lines = [formatter.format(record(1_780_000_000.5)) for _ in range(50)]  # one shape: the access line's
    assert len(set(lines)) == 1
    once = len(asked)
    assert 0 < once <= 40  # each name of the shape asked about once, not once per line
    formatter.format(record(1_780_000_000.5, {**LINE, "cost": Decimal("0.1")}))  # a new shape: its names once
    assert once < len(asked) <= 2 * once + 2
