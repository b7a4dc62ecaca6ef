"""Issue 34 item 5: the gateway's log records look up no thread, process or task.

``llmplex serve`` logs one JSON object per line (``JSONLogFormatter``: time, level, logger, message and the record's
extra fields), which never shows a record's thread, process or process name. Yet every record (every request's
access line) looked them up: ``threading.current_thread()``, ``os.getpid()``, ``multiprocessing``'s current
process. The serve's logging setup now turns those look-ups off (``logging.logThreads``, ``logProcesses``,
``logMultiprocessing``, ``logAsyncioTasks``). What must not change: the lines logged.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from llmplex.gateway import server

LOGGERS = ("llmplex.gateway", "uvicorn.error")
FLAGS = ("logThreads", "logProcesses", "logMultiprocessing", "logAsyncioTasks")


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``server._configure_logging`` applied, everything it changed put back afterwards."""
    for flag in FLAGS:
        if hasattr(logging, flag):
            monkeypatch.setattr(logging, flag, getattr(logging, flag))
    kept = [(logging.getLogger(name), logging.getLogger(name).__dict__.copy()) for name in LOGGERS]
    for logger, _ in kept:
        monkeypatch.setattr(logger, "handlers", list(logger.handlers))
    server._configure_logging()
    yield
    for logger, state in kept:
        logger.setLevel(state["level"])
        logger.propagate = state["propagate"]


def _access_line(logger: logging.Logger) -> logging.LogRecord:
    line: dict[str, Any] = {"request_id": "req_1", "endpoint": "chat.completions", "key": "k", "status": 200}
    return logger.makeRecord(logger.name, logging.INFO, __file__, 0, "request", (), None, extra=line)


@pytest.mark.usefixtures("configured")
def test_item_5_gateway_log_records_look_up_no_thread_or_process() -> None:
    for name in LOGGERS:
        record = _access_line(logging.getLogger(name))
        assert (record.thread, record.threadName, record.process, record.processName) == (None, None, None, None)


@pytest.mark.usefixtures("configured")
def test_item_5_gateway_log_lines_are_unchanged() -> None:
    logger = logging.getLogger("llmplex.gateway")
    (handler,) = [h for h in logger.handlers if isinstance(h.formatter, server.JSONLogFormatter)]
    line = json.loads(handler.formatter.format(_access_line(logger)))
    assert set(line) == {"time", "level", "logger", "message", "request_id", "endpoint", "key", "status"}
    assert (line["level"], line["logger"], line["message"], line["status"]) == (
        "info",
        "llmplex.gateway",
        "request",
        200,
    )
    stream = io.StringIO()
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(stream)
    logger.handle(_access_line(logger))
    assert json.loads(stream.getvalue())["request_id"] == "req_1"
