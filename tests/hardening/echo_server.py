"""A misconfigured proxy on 127.0.0.1 that echoes the caller's credentials back, and leak scanners.

Every ``POST`` is answered ``401`` with the provider's documented error shape
(OpenAI, Anthropic Messages or Gemini, chosen by path) whose message quotes the
``Authorization`` / ``x-api-key`` / ``x-goog-api-key`` headers and the query
string, and with response headers carrying the same values. The helpers then
look for a key in everything a user could see: the whole exception chain and
what each exception carries, log records, events.
"""

from __future__ import annotations

import json
import logging
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest

__all__ = ["EchoServer", "RecordedRequest", "capture_logs", "exception_texts", "leaked"]

_ECHOED = ("authorization", "x-api-key", "x-goog-api-key")


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the proxy received it."""

    path: str
    query: str
    headers: dict[str, str]


class EchoServer:
    """The echoing proxy; ``url`` is its root, ``requests`` what it received."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (no path)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> EchoServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _error_body(path: str, echoed: str) -> dict[str, Any]:
    if path.endswith("/messages"):
        return {"type": "error", "error": {"type": "authentication_error", "message": f"invalid x-api-key: {echoed}"}}
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return {"error": {"code": 401, "message": f"API key not valid: {echoed}", "status": "UNAUTHENTICATED"}}
    return {
        "error": {
            "message": f"Incorrect API key provided: {echoed}",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        parts = urlsplit(self.path)
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.server.owner.requests.append(RecordedRequest(parts.path, parts.query, headers))  # type: ignore[attr-defined]
        credentials = {name: headers[name] for name in _ECHOED if name in headers}
        echoed = " ".join([*credentials.values(), parts.query])
        body = json.dumps(_error_body(parts.path, echoed)).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("WWW-Authenticate", f'Bearer realm="{echoed}"')
        for name, value in credentials.items():
            self.send_header(f"x-echo-{name}", value)
        if parts.query:
            self.send_header("x-echo-query", parts.query)
        self.end_headers()
        self.wfile.write(body)


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException | None] = [error]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        cause = getattr(current, "cause", None)
        todo += [current.__cause__, current.__context__, cause if isinstance(cause, BaseException) else None]


def _carried(value: Any) -> Iterator[str]:
    """What a user sees of one attribute: its repr, and for HTTP messages their headers, body and URL."""
    yield repr(value)
    headers = getattr(value, "headers", None)
    if headers is not None and hasattr(headers, "items"):
        yield repr(list(headers.items()))
    for name in ("content", "text", "url"):
        try:
            found = getattr(value, name, None)
        except Exception:  # an unread stream, a request without a body
            continue
        if found is not None and not callable(found):
            yield repr(found)
    request = getattr(value, "_request", None) or getattr(value, "request", None)
    if request is not None and request is not value and hasattr(request, "headers"):
        yield from _carried(request)


def exception_texts(error: BaseException) -> list[str]:
    """Every text an exception shows: each chained exception's str, repr, args and attributes, and the traceback."""
    texts = ["".join(traceback.format_exception(error))]
    for current in _chain(error):
        texts += [str(current), repr(current), repr(current.args), repr(getattr(current, "__notes__", None))]
        for value in vars(current).values():
            texts.extend(_carried(value))
    return texts


def leaked(secret: str, texts: list[str]) -> list[str]:
    """The texts that contain ``secret`` (shortened to the neighbourhood of the leak)."""
    found = []
    for text in texts:
        at = text.find(secret)
        if at >= 0:
            found.append(text[max(0, at - 120) : at + len(secret) + 40])
    return found


class _Everything(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@contextmanager
def capture_logs() -> Iterator[list[str]]:
    """Every log record of every logger at DEBUG, formatted (tracebacks included), while inside."""
    root = logging.getLogger()
    handler = _Everything()
    saved = root.level, logging.root.manager.disable
    loggers = [logging.getLogger(name) for name in list(logging.root.manager.loggerDict)]
    levels = [(logger, logger.level, logger.disabled, logger.propagate) for logger in loggers]
    logging.disable(logging.NOTSET)
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
        logger.disabled = False
        logger.propagate = True
    try:
        yield handler.lines
    finally:
        root.removeHandler(handler)
        root.setLevel(saved[0])
        logging.disable(saved[1])
        for logger, level, disabled, propagate in levels:
            logger.setLevel(level)
            logger.disabled = disabled
            logger.propagate = propagate


@pytest.fixture
def proxy() -> Iterator[EchoServer]:
    """An echoing proxy on 127.0.0.1 for one test."""
    with EchoServer() as server:
        yield server


@pytest.fixture(autouse=True, scope="module")
def sdks_imported() -> None:
    """Import the SDKs first so that their loggers exist when logging is opened up."""
    import anthropic  # noqa: F401
    import google.genai  # noqa: F401
    import openai  # noqa: F401
    from llmplex_litellm.sdk import load_litellm

    load_litellm()
