"""A local Gemini API for end-to-end runs in a subprocess (where the SDK's network cannot be patched)."""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeGemini"]


class FakeGemini:
    """``POST .../models/{model}:generateContent`` on 127.0.0.1: queued JSON answers, recorded requests."""

    def __init__(self) -> None:
        self.answers: deque[tuple[int, dict[str, Any]]] = deque()
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
                owner.requests.append((self.path, dict(self.headers), body))
                status, answer = owner.answers.popleft() if owner.answers else (500, {"error": {"code": 500}})
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The API root to configure as the gemini provider's ``base_url``."""
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeGemini:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
