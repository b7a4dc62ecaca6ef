"""A local fake of OpenAI's Files + Batches API and Anthropic's Message Batches API on 127.0.0.1.

One server holds both: OpenAI clients use ``server.openai_url`` (``.../v1``),
Anthropic clients ``server.anthropic_url``. Every request body and every
response body is checked against the provider's published contract (the
vendored OpenAI OpenAPI spec; the anthropic SDK's own param TypedDicts and
response models); a violation is answered with 400 and kept in
``server.violations``, which the fixture asserts empty at teardown.

What each request answers is decided by its prompt (the last user text):
``[error]`` fails it, ``[expire]`` lets it expire, ``[cancel]`` cancels it,
``[reject]`` fails the whole OpenAI batch at validation; anything else
succeeds with the text ``echo: <prompt>`` (``{"echo": ...}`` when it asks for
JSON) and ``len(prompt)`` input tokens.
A batch ends after ``polls_to_finish`` retrieves (never while ``hold`` is set),
and its results are returned shuffled.
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["BatchServer", "Fault", "Reply", "answer_of", "outcome_of", "prompt_of"]

Json = dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """One HTTP answer."""

    status: int
    body: bytes
    content_type: str = "application/json"

    @classmethod
    def json(cls, payload: Any, status: int = 200) -> Reply:
        return cls(status, json.dumps(payload).encode())


@dataclass(frozen=True)
class Fault:
    """Answer the next ``count`` requests whose ``METHOD path`` matches ``prefix`` (a regex) with ``reply``.

    ``after``: handle the request first (a batch is created), then lose the answer.
    """

    prefix: str
    count: int
    reply: Reply
    after: bool = False


@dataclass
class BatchServer:
    """The fake; start it with ``with BatchServer() as server``."""

    polls_to_finish: int = 2
    seed: int = 0
    hold: threading.Event = field(default_factory=threading.Event)
    violations: list[str] = field(default_factory=list)
    created: Counter[str] = field(default_factory=Counter)
    polled: Counter[str] = field(default_factory=Counter)
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        from tests.scaling.fake_anthropic_batches import AnthropicBatches
        from tests.scaling.fake_openai_batches import OpenAIBatches

        self.lock = threading.Lock()
        self.random = random.Random(self.seed)
        self.faults: deque[Fault] = deque()
        self.openai = OpenAIBatches(self)
        self.anthropic = AnthropicBatches(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def anthropic_url(self) -> str:
        return self.base_url

    def __enter__(self) -> BatchServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def fail(self, prefix: str, count: int, reply: Reply, *, after: bool = False) -> None:
        """Queue a fault: the next ``count`` matching requests get ``reply`` instead of their answer."""
        self.faults.append(Fault(prefix, count, reply, after))

    def violation(self, where: str, problem: BaseException | str) -> Reply:
        """Record a contract violation and answer 400."""
        text = f"{where}: {problem}"
        self.violations.append(text)
        return Reply.json(
            {"error": {"message": text, "type": "invalid_request_error", "param": None, "code": None}}, 400
        )

    def should_finish(self, batch_id: str) -> bool:
        """Count one poll of ``batch_id``; whether it ends now."""
        self.polled[batch_id] += 1
        return not self.hold.is_set() and self.polled[batch_id] >= self.polls_to_finish

    def shuffled(self, items: list[Any]) -> list[Any]:
        """``items`` in a random order: results never come back in request order."""
        items = list(items)
        self.random.shuffle(items)
        return items

    def route(self, method: str, path: str, body: bytes, headers: dict[str, str]) -> Reply:
        """The answer to one request."""
        key = f"{method} {path}"
        with self.lock:
            self.log.append(key)
            fault = next((f for f in self.faults if re.match(f.prefix, key)), None)
            if fault is not None:
                self.faults.remove(fault)
                if fault.count > 1:
                    self.faults.appendleft(Fault(fault.prefix, fault.count - 1, fault.reply, fault.after))
                if not fault.after:
                    return fault.reply
            api = self.anthropic if path.startswith("/v1/messages/batches") else self.openai
            reply = api.route(method, path, body, headers)
            return fault.reply if fault is not None else reply


def prompt_of(body: Json) -> str:
    """The last user text of a Chat Completions, Responses or Messages request body."""
    turns = body.get("messages") if "messages" in body else body.get("input")
    if isinstance(turns, str):
        return turns
    for turn in reversed(turns or []):
        if turn.get("role") == "user":
            return "".join(_texts(turn.get("content")))
    return ""


def _texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
        return
    for part in content or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            yield part["text"]


def answer_of(body: Json, prompt: str) -> str:
    """The text of a succeeded answer: ``echo: <prompt>``, or ``{"echo": "<prompt>"}`` when the request asks
    for JSON through a JSON Schema (``[badjson]`` in the prompt answers text anyway)."""
    formats = (
        (body.get("response_format") or {}).get("type"),  # Chat Completions
        ((body.get("text") or {}).get("format") or {}).get("type"),  # Responses API
        ((body.get("output_config") or {}).get("format") or {}).get("type"),  # Messages API
    )
    if "json_schema" in formats and "[badjson]" not in prompt:
        return json.dumps({"echo": prompt})
    return f"echo: {prompt}"


def outcome_of(prompt: str) -> str:
    """What the fake does with a request: succeeded, errored, expired, canceled or rejected."""
    for marker, outcome in (("[error]", "errored"), ("[expire]", "expired"), ("[cancel]", "canceled")):
        if marker in prompt:
            return outcome
    return "rejected" if "[reject]" in prompt else "succeeded"


def _handler(server: BatchServer) -> Callable[..., BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                reply = server.route(self.command, self.path, body, headers)
            except Exception as exc:  # a bug in the fake: fail the test, answer something
                reply = server.violation(f"{self.command} {self.path}", f"the fake crashed: {exc!r}")
            self.send_response(reply.status)
            self.send_header("content-type", reply.content_type)
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
