"""A local streaming API server for stream tests (Gemini's SSE, Bedrock's event stream): each POST is recorded
and answered from a script.

A ``Reply`` is a status, a content type and the body's pieces. A 200 event stream (``text/event-stream``, or
Bedrock's binary ``application/vnd.amazon.eventstream``) is sent chunked, piece by piece (``interval`` seconds
apart: a trickle); ``ending`` says how it ends: ``"end"`` (the chunked terminator), ``"cut"`` (the connection
closed mid-body) or ``"stall"`` (silence until the server stops). Any other reply is sent whole under a
Content-Length. Pauses wait on the server's stop event, so a
stopped server ends every reply at once.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal

__all__ = ["Recorded", "Reply", "StreamServer"]

_STREAMS = ("text/event-stream", "application/vnd.amazon.eventstream")
"""Content types sent chunked, piece by piece."""


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    status: int = 200
    pieces: tuple[bytes, ...] = ()
    content_type: str = "text/event-stream"
    headers: tuple[tuple[str, str], ...] = ()
    interval: float = 0.0
    ending: Literal["end", "cut", "stall"] = "end"

    @classmethod
    def events(cls, body: bytes, **options: object) -> Reply:
        """A 200 event stream of ``body`` (``options``: ``interval``, ``ending``, ``headers``)."""
        return cls(200, (body,), **options)  # type: ignore[arg-type]

    @classmethod
    def json(cls, status: int, body: bytes, headers: dict[str, str] | None = None) -> Reply:
        """A JSON (or any) body under a Content-Length."""
        return cls(status, (body,), "application/json; charset=UTF-8", tuple((headers or {}).items()))


@dataclass(frozen=True)
class Recorded:
    """One request as it came: method, path with query, headers (names lowercased, in order), body bytes."""

    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes = field(repr=False)


class StreamServer:
    """``with StreamServer() as server: server.script(Reply.events(...)); ... server.url``."""

    def __init__(self) -> None:
        self._replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order (the last one is repeated); replaces the
        replies scripted before."""
        with self._lock:
            self._replies = deque(replies)

    def _next(self) -> Reply:
        with self._lock:
            return self._replies.popleft() if len(self._replies) > 1 else self._replies[0]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> StreamServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = tuple((name.lower(), value) for name, value in self.headers.items())
                with owner._lock:
                    owner.requests.append(Recorded("POST", self.path, headers, body))
                reply = owner._next()
                with contextlib.suppress(OSError):
                    self._answer(reply)

            def _answer(self, reply: Reply) -> None:
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                for name, value in reply.headers:
                    self.send_header(name, value)
                if reply.status != 200 or not reply.content_type.startswith(_STREAMS):
                    content = b"".join(reply.pieces)
                    self.send_header("Content-Length", str(len(content)))
                    self.end_headers()
                    self.wfile.write(content)
                    return
                self.send_header("Transfer-Encoding", "chunked")
                # said, since the connection is closed after the stream: a client pooling it as kept alive raced
                # the close with its next request ("Server disconnected without sending a response")
                self.send_header("Connection", "close")
                self.end_headers()
                pieces = [bytes([b]) for b in b"".join(reply.pieces)] if reply.interval else list(reply.pieces)
                for piece in pieces:
                    if owner._stopping.wait(reply.interval):
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
                if reply.ending == "stall":
                    owner._stopping.wait(30)
                if reply.ending == "end":
                    self.wfile.write(b"0\r\n\r\n")
                self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
