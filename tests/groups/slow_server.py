"""An OpenAI-wire server whose answers wait, and which sees a client hang up while it waits.

Each request to ``/v1/chat/completions`` waits the next scripted delay (``0``
when none is queued) before answering (JSON, or SSE when ``"stream": true``).
While it waits it watches the connection: a client that closes it is recorded
in ``cancelled`` (and ``hung_up`` is set), and nothing is sent.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.contract import fixtures_openai as fx
from tests.support.openai_wire import CHAT_PATH, success_body, success_events

_STEP = 0.01


class SlowServer:
    """A local server on 127.0.0.1 and an OS-chosen port; ``with SlowServer() as server: server.url``."""

    def __init__(self) -> None:
        self.delays: deque[float] = deque()
        self.failures = 0  # the next requests answered 500 at once
        self.received = 0
        self.answered = 0
        self.cancelled = 0
        self.arrivals: list[float] = []  # time.monotonic() of each request's arrival
        self.hung_up = threading.Event()
        self.arrived = threading.Event()
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self._httpd = _Server(self)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(_STEP,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def delay(self, *seconds: float) -> None:
        """Wait these many seconds before the next answers, in order."""
        with self.lock:
            self.delays.extend(seconds)

    def fail(self, count: int) -> None:
        """Answer the next ``count`` requests with a 500 at once."""
        with self.lock:
            self.failures += count

    def reset(self) -> None:
        """Forget what was received, answered and cancelled so far."""
        with self.lock:
            self.received = self.answered = self.cancelled = 0
            self.arrivals.clear()
        self.hung_up.clear()
        self.arrived.clear()

    def __enter__(self) -> SlowServer:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: SlowServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        owner = self.server.owner
        body: Any = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with owner.lock:
            owner.received += 1
            owner.arrivals.append(time.monotonic())
            delay = owner.delays.popleft() if owner.delays else 0.0
            failing, owner.failures = owner.failures > 0, max(0, owner.failures - 1)
        owner.arrived.set()
        if failing:
            data = json.dumps({"error": {"message": "server error", "type": "server_error"}}).encode()
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if not self._wait(delay):
            with owner.lock:
                owner.cancelled += 1
            owner.hung_up.set()
            self.close_connection = True
            return
        with owner.lock:
            owner.answered += 1
        usage = fx.TokenUsage()
        if body.get("stream") is True:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in [*success_events(CHAT_PATH, body, "hedged answer", usage), b""]:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
        else:
            data = success_body(CHAT_PATH, body, "hedged answer", usage)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def _wait(self, seconds: float) -> bool:
        """Wait ``seconds`` watching the connection: ``False`` as soon as the client closes it."""
        owner = self.server.owner
        ends = time.monotonic() + seconds
        while time.monotonic() < ends and not owner.stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], _STEP)
            if readable:
                with contextlib.suppress(OSError):
                    if self.connection.recv(1, socket.MSG_PEEK) != b"":
                        continue
                return False
        return True
