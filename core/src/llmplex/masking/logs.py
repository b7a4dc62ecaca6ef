"""Mask secrets in every log record of the process, whichever library logs it.

SDKs and their HTTP stacks log at DEBUG what a server sent (httpcore: response
headers; openai and anthropic: headers and status errors with tracebacks) and at
INFO every request URL (httpx). ``install_log_redaction`` wraps the
process's log record factory once: a record whose message contains a secret is
stored already formatted and masked, and an exception attached to it is
scrubbed in place (``scrub_error``), so every handler
and formatter sees masked text. Records are only touched when a logger is
enabled for them, so a quiet application pays nothing.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from llmplex.masking.errors import scrub_error
from llmplex.masking.values import redact

__all__ = ["install_log_redaction"]

_lock = threading.Lock()
_installed = False


def install_log_redaction() -> None:
    """Wrap the log record factory so that every record is masked (idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def masked_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
            return _masked(previous(*args, **kwargs))

        logging.setLogRecordFactory(masked_record)
        _installed = True


def _masked(record: logging.LogRecord) -> logging.LogRecord:
    try:
        message = record.getMessage()
    except Exception:  # a broken format string: logging reports it when the record is emitted
        return record
    masked = redact(message)
    if masked != message:
        record.msg, record.args = masked, None
    if record.exc_info and record.exc_info[1] is not None:
        scrub_error(record.exc_info[1])
    return record
