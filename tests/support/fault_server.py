"""A local HTTP server speaking the OpenAI wire format that fails on demand.

``POST /v1/chat/completions`` and ``POST /v1/responses`` answer from a script
(``DELETE /v1/responses/{id}`` always succeeds):
queued faults are consumed in order; when the queue is empty a seeded random
draw fails a fraction of requests; otherwise the default reply is sent. Every
request is recorded (path, headers, JSON body, the fault applied) so tests can
count how many HTTP requests an operation really made.

    with FaultServer() as server:
        server.enqueue(Fault.rate_limit(retry_after=1), Fault.ok(usage=TokenUsage(7, 3)))
        client = OpenAI(base_url=server.url, api_key="test", max_retries=0)

With ``any_path=True`` every POST path gets the script (the other providers'
endpoints too, for faults whose body does not matter: hangs, resets, trickles);
otherwise an unknown path is a 404.

The server is bounded: it stops itself after ``lifetime`` seconds, hangs and
stalls sleep in short steps and end as soon as it stops, and ``stop()`` closes
every open connection before joining the handler threads.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.contract import fixtures_openai as fx
from tests.support.faults import MALFORMED_EVENT, MALFORMED_JSON, Fault
from tests.support.openai_wire import CHAT_PATH, ENDPOINTS, RESPONSES_PATH, encode, success_body, success_events

__all__ = ["Fault", "FaultServer", "RecordedRequest"]

_STEP = 0.02  # seconds between stop checks while hanging or stalling


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request as the server received it, when, and the fault it was answered with."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    fault: Fault
    received: float = 0.0  # time.time() when the request was read


class FaultServer:
    """Fault-injecting OpenAI-compatible server on 127.0.0.1 and an ephemeral port."""

    def __init__(
        self,
        default: Fault | None = None,
        *,
        failure_rate: float = 0.0,
        random_faults: Sequence[Fault] = (),
        seed: int = 0,
        lifetime: float = 120.0,
        any_path: bool = False,
    ) -> None:
        self.default = default or Fault.ok()
        self.any_path = any_path
        self._queue: deque[Fault] = deque()
        self._records: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._released = threading.Event()
        self._stop_lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self.set_random(failure_rate, random_faults, seed)
        self._httpd = _HTTPServer(self)
        self._serve_thread = threading.Thread(target=self._httpd.serve_forever, args=(_STEP,), daemon=True)
        self._watchdog = threading.Timer(lifetime, self.stop)
        self._watchdog.daemon = True

    # --- lifecycle --------------------------------------------------------------------

    @property
    def address(self) -> tuple[str, int]:
        """The (host, port) the server listens on."""
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        """Base URL for an OpenAI client, ending in ``/v1``."""
        host, port = self.address
        return f"http://{host}:{port}/v1"

    def start(self) -> FaultServer:
        """Start serving in a background thread."""
        self._serve_thread.start()
        self._watchdog.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections and join all threads (idempotent)."""
        with self._stop_lock:  # the watchdog and the owner may both call stop()
            if self._stopping.is_set():
                return
            self._stopping.set()
        self._released.set()  # a held request ends with the server
        self._watchdog.cancel()
        if self._serve_thread.is_alive():
            self._httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            _shutdown_quietly(connection)
        self._httpd.server_close()

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # --- script -----------------------------------------------------------------------

    def enqueue(self, *faults: Fault) -> None:
        """Answer the next requests with these faults, in order."""
        with self._lock:
            self._queue.extend(faults)

    def set_random(self, failure_rate: float, faults: Sequence[Fault], seed: int = 0) -> None:
        """Once the queue is empty, fail each request with probability ``failure_rate``."""
        if not 0.0 <= failure_rate <= 1.0 or (failure_rate and not faults):
            raise ValueError("failure_rate must be in [0, 1], with faults to draw from when > 0")
        with self._lock:
            self._failure_rate = failure_rate
            self._random_faults = tuple(faults)
            self._rng = random.Random(seed)

    def release(self) -> None:
        """Let every ``Fault.held`` request, waiting or to come, answer, and end every stall now."""
        self._released.set()

    def reset(self) -> None:
        """Forget queued faults and recorded requests."""
        with self._lock:
            self._queue.clear()
            self._records.clear()

    # --- observations -----------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order."""
        with self._lock:
            return list(self._records)

    @property
    def request_count(self) -> int:
        """How many HTTP requests arrived."""
        with self._lock:
            return len(self._records)

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> bool:
        """Block until ``count`` requests have arrived (whether ``timeout`` seconds sufficed)."""
        with self._arrived:
            return self._arrived.wait_for(lambda: len(self._records) >= count, timeout)

    @property
    def pending(self) -> int:
        """Queued faults not consumed yet."""
        with self._lock:
            return len(self._queue)

    # --- used by the handler ----------------------------------------------------------

    def _next_fault(
        self, method: str, path: str, headers: dict[str, str], body: object, forced: Fault | None = None
    ) -> Fault:
        """Pick the fault for this request (``forced`` bypasses the script) and record both."""
        with self._lock:
            if forced is not None:
                fault = forced
            elif self._queue:
                fault = self._queue.popleft()
            elif self._failure_rate and self._rng.random() < self._failure_rate:
                fault = self._rng.choice(self._random_faults)
            else:
                fault = self.default
            self._records.append(RecordedRequest(method, path, headers, body, fault, time.time()))
            self._arrived.notify_all()
            return fault

    def _track(self, connection: socket.socket, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def _sleep(self, seconds: float) -> None:
        """Sleep up to ``seconds``, returning early once the server stops."""
        self._stopping.wait(seconds)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = False  # so server_close() joins handler threads
    block_on_close = True
    request_queue_size = 128  # the stdlib's 5 refuses connects from concurrent batches

    def __init__(self, owner: FaultServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10  # an idle keep-alive connection never pins a thread for long
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms Nagle stalls
        self.server.owner._track(self.connection, open_=True)

    def handle(self) -> None:
        """Serve the connection; a client hanging up or resetting it is routine here."""
        with contextlib.suppress(ConnectionError):
            super().handle()

    def finish(self) -> None:
        self.server.owner._track(self.connection, open_=False)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: object) -> None:
        """Keep test output quiet."""

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = _parse_json(raw)
        headers = {name.lower(): value for name, value in self.headers.items()}
        unknown = None
        if self.path not in ENDPOINTS and not self.server.owner.any_path:
            error = fx.error_body(f"Unknown request URL: POST {self.path}.", "invalid_request_error")
            unknown = Fault.json(404, error)
        fault = self.server.owner._next_fault("POST", self.path, headers, body, forced=unknown)
        request = body if isinstance(body, dict) else {}
        getattr(self, f"_reply_{fault.kind}")(fault, request)

    def do_DELETE(self) -> None:
        """``DELETE /v1/responses/{id}`` (a stored response) succeeds, is recorded, and consumes no queued fault."""
        headers = {name.lower(): value for name, value in self.headers.items()}
        response_id = self.path.removeprefix(RESPONSES_PATH + "/")
        if response_id == self.path or not response_id or "/" in response_id:
            reply = Fault.json(404, fx.error_body(f"Unknown request URL: DELETE {self.path}.", "invalid_request_error"))
        else:
            reply = Fault.json(200, {"id": response_id, "object": "response", "deleted": True})
        fault = self.server.owner._next_fault("DELETE", self.path, headers, None, forced=reply)
        self._reply_json(fault, {})

    # --- replies, one per Fault.kind --------------------------------------------------

    def _reply_ok(self, fault: Fault, request: fx.Json) -> None:
        if request.get("stream") is True:
            self._send_stream(success_events(self.path, request, fault.text, fault.usage))
        else:
            self._send_body(200, success_body(self.path, request, fault.text, fault.usage))

    def _reply_json(self, fault: Fault, request: fx.Json) -> None:
        self._send_json(fault.status, fault.body, dict(fault.headers))

    def _reply_malformed(self, fault: Fault, request: fx.Json) -> None:
        if request.get("stream") is True:
            self._send_stream([*success_events(self.path, request, fault.text, fault.usage)[:1], MALFORMED_EVENT])
        else:
            self._send_body(200, MALFORMED_JSON)

    def _reply_hang(self, fault: Fault, request: fx.Json) -> None:
        self.server.owner._sleep(fault.seconds)
        self.close_connection = True

    def _reply_held(self, fault: Fault, request: fx.Json) -> None:
        owner = self.server.owner
        owner._released.wait()  # stop() releases too
        if owner._stopping.is_set():
            self.close_connection = True
            return
        self._reply_ok(fault, request)

    def _reply_reset(self, fault: Fault, request: fx.Json) -> None:
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # Close the descriptor itself (linger 0: RST, not FIN) while the detached socket
        # object lets the stdlib's own cleanup run harmlessly afterwards.
        os.close(self.connection.detach())
        self.close_connection = True

    def _reply_cut(self, fault: Fault, request: fx.Json) -> None:
        self._send_partial(fault, request)
        self.close_connection = True

    def _reply_stall(self, fault: Fault, request: fx.Json) -> None:
        self._send_partial(fault, request)
        self.server.owner._released.wait(fault.seconds)  # ``release()`` (or the server's stop) ends it early
        self.close_connection = True

    def _reply_trickle(self, fault: Fault, request: fx.Json) -> None:
        owner = self.server.owner
        if request.get("stream") is True:
            self._start_stream()
            for byte in b"".join(success_events(CHAT_PATH, request, fault.text, fault.usage)):
                owner._sleep(fault.seconds)
                if owner._stopping.is_set():
                    break
                self._write_chunk(bytes([byte]))
        else:
            body = success_body(CHAT_PATH, request, fault.text, fault.usage)
            self._start(200, "application/json", {"Content-Length": str(len(body))})
            self.wfile.flush()
            self._trickle(body, fault.seconds)
        self.close_connection = True

    def _reply_trickle_head(self, fault: Fault, request: fx.Json) -> None:
        body = success_body(CHAT_PATH, request, fault.text, fault.usage)
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        self._trickle(head.encode() + body, fault.seconds)
        self.close_connection = True

    def _trickle(self, data: bytes, interval: float) -> None:
        """Write ``data`` one byte every ``interval`` seconds, until done or the server stops."""
        owner = self.server.owner
        for byte in data:
            owner._sleep(interval)
            if owner._stopping.is_set():
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()

    # --- writing ----------------------------------------------------------------------

    def _send_partial(self, fault: Fault, request: fx.Json) -> None:
        """The first ``after_events`` SSE events, or half a JSON body under its full Content-Length."""
        if request.get("stream") is True:
            events = success_events(self.path, request, fault.text, fault.usage)
            self._start_stream()
            for event in events[: fault.after_events]:
                self._write_chunk(event)
            return
        body = success_body(self.path, request, fault.text, fault.usage)
        self._start(200, "application/json", {"Content-Length": str(len(body))})
        self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()

    def _send_json(self, status: int, payload: object, headers: dict[str, str] | None = None) -> None:
        self._send_body(status, encode(payload), headers)

    def _send_body(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self._start(status, "application/json", {**(headers or {}), "Content-Length": str(len(body))})
        self.wfile.write(body)

    def _send_stream(self, events: list[bytes]) -> None:
        self._start_stream()
        for event in events:
            self._write_chunk(event)
        self._write_chunk(b"")

    def _start_stream(self) -> None:
        self._start(200, "text/event-stream; charset=utf-8", {"Transfer-Encoding": "chunked"})

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _start(self, status: int, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("x-request-id", f"req_fault_{time.monotonic_ns()}")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()


def _parse_json(raw: bytes) -> object:
    try:
        parsed: object = json.loads(raw) if raw else None
    except ValueError:
        return raw
    return parsed


def _shutdown_quietly(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)
