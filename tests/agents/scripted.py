"""A local Chat Completions server answering from a script (text or tool calls, whole or streamed), for the
real agents' tests: an OpenAI-wire upstream that can ask an agent to run one of its tools."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from llmplex.testing import OpenAIChatWire, Reply

__all__ = ["JsonServer", "ScriptedChat", "json_server", "scripted_chat"]

_WIRE = OpenAIChatWire()


def _answer(handler: BaseHTTPRequestHandler, data: bytes, kind: str) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _server(answer: Callable[[str, dict[str, Any]], tuple[bytes, str]]) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 whose every POST gets ``answer(path, json_body)`` as (body, content type)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            _answer(self, *answer(self.path, body))

        def log_message(self, format: str, *args: object) -> None:
            pass

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


@contextmanager
def _running(server: ThreadingHTTPServer) -> Iterator[None]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


class ScriptedChat:
    """``url`` ends in ``/v1``; ``bodies`` holds each request's JSON; ``replies`` are given in order, then
    ``default``."""

    def __init__(self, default: Reply) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.replies: deque[Reply] = deque()
        self.default = default
        self.server = _server(self._answer)

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[bytes, str]:
        self.bodies.append(body)
        reply = self.replies.popleft() if self.replies else self.default
        if body.get("stream"):
            return b"".join(_WIRE.stream(reply)), "text/event-stream"
        return json.dumps(_WIRE.response(reply)).encode(), "application/json"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@contextmanager
def scripted_chat(default: Reply) -> Iterator[ScriptedChat]:
    """A running ``ScriptedChat``, shut down afterwards."""
    server = ScriptedChat(default)
    with _running(server.server):
        yield server


class JsonServer:
    """A local HTTP server answering every POST with the next queued JSON body (``answers``); ``seen`` holds each
    request's path and JSON body. For the providers' count endpoints (Gemini's ``countTokens``, Bedrock's)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.answers: deque[dict[str, Any]] = deque()
        self.server = _server(self._answer)

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[bytes, str]:
        self.seen.append((path, body))
        return json.dumps(self.answers.popleft()).encode(), "application/json"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@contextmanager
def json_server() -> Iterator[JsonServer]:
    """A running ``JsonServer``, shut down afterwards."""
    server = JsonServer()
    with _running(server.server):
        yield server
