"""A local fake of Anthropic's Messages API for the gateway's and the coding agents' tests."""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeAnthropic"]


class FakeAnthropic:
    """A local Messages API server: ``bodies`` holds each request's JSON; answers are queued (JSON or SSE)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.answers: deque[tuple[str, bytes]] = deque()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                owner.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                kind, body = owner.answers.popleft()
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def reply(self, body: dict[str, Any]) -> None:
        self.answers.append(("application/json", json.dumps(body).encode()))

    def reply_stream(self, body: bytes) -> None:
        self.answers.append(("text/event-stream", body))

    def __enter__(self) -> FakeAnthropic:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
