"""A scripted HTTP server on 127.0.0.1 for the conformance kit: the provider's side of the wire.

Any HTTP plugin (an official SDK, httpx, aiohttp...) talks to it through a real
socket, so what the kit sees is what the plugin really sent, and what it scripts
(a slow answer, a stall, a reset, a stream, an HTML error page) really happens::

    with WireServer() as server:
        server.push(Answer.json(200, {...}, delay=0.5))
        ...                         # the plugin sends to server.url
        server.received[0].json()   # what it sent

Answers are taken in order by whatever request comes next. A request with no
answer queued gets a 599 naming the request, so a test sees the surprise.
Stalls end as soon as the server stops.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

__all__ = ["Answer", "Received", "WireServer"]


@dataclass(frozen=True)
class Answer:
    """One scripted answer.

    ``kind``: ``"respond"`` sends ``status``, ``headers`` and the ``chunks`` of the
    body (several chunks: a chunked, flushed-per-chunk stream) after ``delay``
    seconds; ``"stall"`` accepts the request and sends nothing for ``delay``
    seconds, then closes; ``"reset"`` resets the connection.
    """

    kind: Literal["respond", "stall", "reset"] = "respond"
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    chunks: tuple[bytes, ...] = ()
    delay: float = 0.0

    @classmethod
    def json(cls, status: int, body: Any, headers: Mapping[str, str] | None = None, delay: float = 0.0) -> Answer:
        """A JSON body."""
        head = {"content-type": "application/json", **(headers or {})}
        return cls(status=status, headers=head, chunks=(json.dumps(body).encode(),), delay=delay)

    @classmethod
    def text(
        cls, status: int, body: str, content_type: str, headers: Mapping[str, str] | None = None, delay: float = 0.0
    ) -> Answer:
        """A text body (an HTML error page, plain text)."""
        head = {"content-type": content_type, **(headers or {})}
        return cls(status=status, headers=head, chunks=(body.encode(),), delay=delay)

    @classmethod
    def stream(cls, chunks: Sequence[bytes], content_type: str = "text/event-stream", delay: float = 0.0) -> Answer:
        """A streamed 200 answer, one flushed chunk per item (server-sent events, JSON lines...)."""
        return cls(
            status=200, headers={"content-type": content_type}, chunks=(*(c for c in chunks if c), b""), delay=delay
        )

    @classmethod
    def stall(cls, seconds: float) -> Answer:
        """Take the request and answer nothing for ``seconds``."""
        return cls(kind="stall", delay=seconds)

    @classmethod
    def reset(cls) -> Answer:
        """Reset the connection (a refused or dropped connection, as the client sees it)."""
        return cls(kind="reset")


@dataclass(frozen=True)
class Received:
    """One request as the server received it."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    """Header names lower-cased."""
    body: bytes

    def json(self) -> Any:
        """The body decoded from JSON (``None`` for an empty body)."""
        return json.loads(self.body) if self.body else None


class WireServer:
    """The scripted server; use it as a context manager, or ``start()`` and ``stop()``."""

    def __init__(self) -> None:
        self._answers: deque[Answer] = deque()
        self._received: list[Received] = []
        self._malformed: list[bytes] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def push(self, *answers: Answer) -> None:
        """Queue answers for the next requests, in order."""
        with self._lock:
            self._answers.extend(answers)

    @property
    def received(self) -> list[Received]:
        """Every request so far, oldest first."""
        with self._lock:
            return list(self._received)

    @property
    def malformed(self) -> list[bytes]:
        """The request lines of requests the server could not read (answered 400 and not in ``received``)."""
        with self._lock:
            return list(self._malformed)

    @property
    def pending(self) -> int:
        """Answers queued and not taken yet."""
        with self._lock:
            return len(self._answers)

    def start(self) -> WireServer:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """End stalls, drop open connections, stop serving (idempotent)."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        if self._thread.is_alive():
            self._httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _take(self, received: Received) -> Answer:
        with self._lock:
            self._received.append(received)
            if self._answers:
                return self._answers.popleft()
        note = f"the conformance kit had no answer queued for {received.method} {received.path}"
        return Answer.json(599, {"error": {"message": note}})

    def _unreadable(self, request_line: bytes) -> None:
        with self._lock:
            self._malformed.append(request_line)

    def _track(self, connection: socket.socket, opened: bool) -> None:
        with self._lock:
            if opened:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def _wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; ``False`` when the server stopped meanwhile."""
        return not self._stopping.wait(seconds) if seconds > 0 else not self._stopping.is_set()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, owner: WireServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._track(self.connection, opened=True)

    def handle(self) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            super().handle()

    def finish(self) -> None:
        self.server.owner._track(self.connection, opened=False)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def parse_request(self) -> bool:
        """Read the request line and headers; a request that cannot be read is kept in ``malformed``."""
        if super().parse_request():
            return True
        self.server.owner._unreadable(getattr(self, "raw_requestline", b""))  # set by handle_one_request
        return False

    def _serve(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        url = urlsplit(self.path)
        headers = {name.lower(): value for name, value in self.headers.items()}
        answer = self.server.owner._take(Received(self.command, url.path, parse_qs(url.query), headers, body))
        if answer.kind == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            os.close(self.connection.detach())
            self.close_connection = True
            return
        if not self.server.owner._wait(answer.delay) or answer.kind == "stall":
            self.close_connection = True
            return
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        if len(answer.chunks) == 1:
            self.send_header("content-length", str(len(answer.chunks[0])))
            self.end_headers()
            self.wfile.write(answer.chunks[0])
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for chunk in answer.chunks:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()

    do_GET = do_POST = do_PUT = do_DELETE = _serve  # noqa: N815 - the names http.server dispatches to
