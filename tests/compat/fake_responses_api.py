"""A stateful fake of OpenAI's Responses API on 127.0.0.1, for seed 004's integration tests.

It stores every response it gives: ``previous_response_id`` continues the stored
conversation (an unknown or deleted id is a 404, as OpenAI answers), ``GET`` and
``DELETE /v1/responses/{id}`` retrieve and delete (404 when unknown). The answer
is JSON for the request's schema, made by ``brain(conversation)`` from every user
input of the chain so far, so a chain that carries context shows it in the answer;
with ``reasoning_summary`` a reasoning item with that summary comes first.
An input containing ``FAIL`` is answered 400.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeResponsesAPI"]

PATH = "/v1/responses"


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    texts: list[str] = []
    for item in value or ():
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [str(p.get("text") or "") for p in content if isinstance(p, dict)]
    return texts


def default_brain(conversation: list[str]) -> dict[str, Any]:
    """An IntentionResponse: the last input is the intention, the whole chain the reasoning."""
    return {"intention": conversation[-1], "target": None, "reasoning": " | ".join(conversation)}


class FakeResponsesAPI:
    """``with FakeResponsesAPI() as api: api.url`` is an ``OPENAI_BASE_URL``."""

    def __init__(
        self, brain: Callable[[list[str]], dict[str, Any]] = default_brain, reasoning_summary: str | None = None
    ) -> None:
        self.brain = brain
        self.reasoning_summary = reasoning_summary
        self.stored: dict[str, list[str]] = {}
        self.requests: list[tuple[str, str, dict[str, Any]]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL, ``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeResponsesAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def posts(self) -> list[dict[str, Any]]:
        """The bodies of every ``POST /v1/responses``."""
        return [body for method, _, body in self.requests if method == "POST"]

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The status and JSON for one ``POST``."""
        inputs = _texts(body.get("input"))
        previous = body.get("previous_response_id")
        with self._lock:
            if previous is not None and previous not in self.stored:
                message = f"Previous response with id '{previous}' not found."
                return 404, {"error": {"message": message, "type": "invalid_request_error", "code": None}}
            if any("FAIL" in text for text in inputs):
                return 400, {"error": {"message": "the input asked to fail", "type": "invalid_request_error"}}
            conversation = [*self.stored.get(previous, []), *inputs] if previous else inputs
            response_id = f"resp_{next(self._ids)}"
            self.stored[response_id] = conversation
        text = json.dumps(self.brain(conversation))
        usage = {
            "input_tokens": 10 * len(conversation),
            "output_tokens": 5,
            "total_tokens": 10 * len(conversation) + 5,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        message = {
            "type": "message",
            "id": f"msg_{response_id}",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        output: list[dict[str, Any]] = [message]
        if self.reasoning_summary is not None:
            summary = [{"type": "summary_text", "text": self.reasoning_summary}]
            output.insert(0, {"type": "reasoning", "id": f"rs_{response_id}", "summary": summary})
        return 200, {
            "id": response_id,
            "object": "response",
            "created_at": 1_700_000_000,
            "status": "completed",
            "model": body.get("model", "gpt-test"),
            "service_tier": "default",
            "output": output,
            "usage": usage,
        }


def _handler(api: FakeResponsesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stored_id(self) -> str | None:
            rest = self.path.removeprefix(PATH + "/")
            return None if rest == self.path or "/" in rest else rest

        def do_POST(self) -> None:
            size = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(size) or b"{}")
            api.requests.append(("POST", self.path, body))
            self._send(*api.answer(body))

        def do_GET(self) -> None:
            api.requests.append(("GET", self.path, {}))
            found = self._stored_id()
            if found in api.stored:
                self._send(200, {"id": found, "object": "response", "status": "completed"})
            else:
                self._send(404, {"error": {"message": f"Response '{found}' not found.", "type": "not_found"}})

        def do_DELETE(self) -> None:
            api.requests.append(("DELETE", self.path, {}))
            found = self._stored_id()
            with api._lock:
                known = found is not None and api.stored.pop(found, None) is not None
            if known:
                self._send(200, {"id": found, "object": "response", "deleted": True})
            else:
                self._send(404, {"error": {"message": f"Response '{found}' not found.", "type": "not_found"}})

    return Handler
