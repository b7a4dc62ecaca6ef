"""Mask secrets in every log record of the process, whichever library logs it.

SDKs and their HTTP stacks log at DEBUG what a server sent (httpcore: response
headers; openai and anthropic: headers and status errors with tracebacks) and at
INFO every request URL (httpx). ``install_log_redaction`` wraps the
process's log record factory once: a record whose message contains a secret is
stored already formatted and masked, and an exception attached to it is
scrubbed in place (``scrub_error``), so every handler
and formatter sees masked text. Records are only touched when a logger is
enabled for them, so a quiet application pays nothing; a constant message
(no arguments: the gateway's access line is one) found clean is not searched
again until another secret is registered.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from llmplex.masking import values
from llmplex.masking.errors import scrub_error
from llmplex.masking.values import redact

__all__ = ["install_log_redaction"]

_lock = threading.Lock()
_installed = False
_MAX_CLEAN = 1024
"""Constant messages remembered as clean (then the set starts again)."""
_clean: set[str] = set()
_clean_under: tuple[str, ...] = ()  # the registered secrets the messages in _clean were searched for


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
    message = record.msg
    if not record.args and type(message) is str:  # a constant message: its text as written
        _mask_constant(record, message)
    else:
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


def _mask_constant(record: logging.LogRecord, message: str) -> None:
    """Mask a message without arguments; one found clean is remembered (only clean text is ever kept)."""
    global _clean_under
    secrets = values._secrets
    if _clean_under is not secrets:  # a secret registered since: every message is searched again
        _clean.clear()
        _clean_under = secrets
    if message in _clean:
        return
    masked = redact(message)
    if masked != message:
        record.msg, record.args = masked, None
        return
    if len(_clean) >= _MAX_CLEAN:
        _clean.clear()
    if _clean_under is secrets:  # not while another thread saw a secret registered meanwhile
        _clean.add(message)
