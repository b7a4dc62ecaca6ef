"""A local Chat Completions server answering from a script (text or tool calls, whole or streamed), for the
real agents' tests: an OpenAI-wire upstream that can ask an agent to run one of its tools."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from llmplex.testing import OpenAIChatWire, Reply

__all__ = ["JsonServer", "ScriptedChat", "json_server", "scripted_chat"]

_WIRE = OpenAIChatWire()


class ScriptedChat:
    """``url`` ends in ``/v1``; ``bodies`` holds each request's JSON; ``replies`` are given in order, then
    ``default``."""

    def __init__(self, default: Reply) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.replies: deque[Reply] = deque()
        self.default = default
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.bodies.append(body)
                reply = owner.replies.popleft() if owner.replies else owner.default
                if body.get("stream"):
                    data, kind = b"".join(_WIRE.stream(reply)), "text/event-stream"
                else:
                    data, kind = json.dumps(_WIRE.response(reply)).encode(), "application/json"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@contextmanager
def scripted_chat(default: Reply) -> Iterator[ScriptedChat]:
    """A running ``ScriptedChat``, shut down afterwards."""
    server = ScriptedChat(default)
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()


class JsonServer:
    """A local HTTP server answering every POST with the next queued JSON body (``answers``); ``seen`` holds each
    request's path and JSON body. For the providers' count endpoints (Gemini's ``countTokens``, Bedrock's)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.answers: deque[dict[str, Any]] = deque()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                owner.seen.append((self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
                data = json.dumps(owner.answers.popleft()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@contextmanager
def json_server() -> Iterator[JsonServer]:
    """A running ``JsonServer``, shut down afterwards."""
    server = JsonServer()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()
