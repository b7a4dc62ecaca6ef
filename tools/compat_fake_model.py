"""A toy model behind OpenAI's Responses and Chat Completions APIs on 127.0.0.1, for the systems' integration tests.

The source systems' integration tests call a live model. `tools/compat_suites.py`
points them here instead (``OPENAI_BASE_URL``, ``LITELLM_BASE_URL``), for the
originals and for llmplex alike, so both are measured against the same answers.
The "model" is a few rules, not a language model:

- it keeps every response (``store``): ``previous_response_id`` continues the
  conversation, ``GET``/``DELETE /v1/responses/{id}`` retrieve and delete it;
- with tools declared and no tool result yet, it calls the forced tool (or the
  first) with the first JSON object of the prompt as arguments;
- otherwise its answer is the conversation so far (every text, tool results
  included) with the sums and products written in it worked out, as text or
  filled into the requested JSON schema;
- a key containing ``invalid`` is refused (401); ``max_output_tokens`` (or
  ``max_tokens``) below 64 cuts the answer (``incomplete`` / ``length``);
  reasoning requests report reasoning tokens and a summary. It answers at once
  and knows nothing: tests that need a slow or a knowing model fail on the
  originals too, and are not counted.

Run alone: ``python tools/compat_fake_model.py`` prints its base URL and serves
until interrupted.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeModel"]

_ARITHMETIC = re.compile(r"(\d+)\s*([+*x])\s*(\d+)")
_SHORT_LIMIT = 64


def _texts(value: Any) -> list[str]:
    """Every text in a Responses ``input`` or a Chat Completions ``messages`` list."""
    if isinstance(value, str):
        return [value]
    texts: list[str] = []
    for item in value or ():
        if not isinstance(item, dict):
            continue
        for key in ("content", "output"):
            content = item.get(key)
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts += [str(p.get("text") or "") for p in content if isinstance(p, dict)]
    return [t for t in texts if t]


def _worked_out(text: str) -> str:
    results = []
    for left, op, right in _ARITHMETIC.findall(text):
        value = int(left) + int(right) if op == "+" else int(left) * int(right)
        results.append(f"{left} {op} {right} = {value}")
    return "; ".join(results)


def _answer_text(conversation: list[str]) -> str:
    said = " | ".join(conversation)
    worked = _worked_out(conversation[-1] if conversation else "")
    return f"{worked}. {said}" if worked else said


def _fill(schema: Any, text: str, defs: dict[str, Any]) -> Any:
    """A value of ``schema`` whose strings are ``text``."""
    if not isinstance(schema, dict):
        return text
    if "$ref" in schema:
        return _fill(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), text, defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return _fill(options[0], text, defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        return {name: _fill(sub, text, defs) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [_fill(schema.get("items") or {}, text, defs)]
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    return text


def _first_object(texts: list[str]) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    for text in texts:
        for start in (m.start() for m in re.finditer(r"\{", text)):
            try:
                value, _ = decoder.raw_decode(text[start:])
            except ValueError:
                continue
            if isinstance(value, dict) and value:
                return value
    return None


def _usage(conversation: list[str], answer: str) -> tuple[int, int]:
    return sum(len(t.split()) for t in conversation) + 1, len(answer.split()) + 1


class FakeModel:
    """``with FakeModel() as model: model.url`` is an OpenAI base URL (``.../v1``)."""

    def __init__(self) -> None:
        self.stored: dict[str, list[str]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL, ``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_{next(self._ids):06d}"

    def responses(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """One ``POST /v1/responses``."""
        previous = body.get("previous_response_id")
        with self._lock:
            if previous and previous not in self.stored:
                return 404, _error(f"Previous response with id '{previous}' not found.", "not_found")
            history = list(self.stored.get(previous, [])) if previous else []
        texts = [str(body.get("instructions") or ""), *_texts(body.get("input"))]
        conversation = history + [t for t in texts if t]
        tools = [t for t in body.get("tools") or () if isinstance(t, dict)]
        items = body.get("input") if isinstance(body.get("input"), list) else []
        answered = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
        response_id = self._new_id("resp")
        output: list[dict[str, Any]] = []
        reasoning = bool(body.get("reasoning"))
        if reasoning:
            output.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{response_id}",
                    "summary": [{"type": "summary_text", "text": "Worked it out."}],
                }
            )
        limit = body.get("max_output_tokens")
        call = _tool_call(tools, body.get("tool_choice"), conversation) if tools and not answered else None
        if call is not None:
            name, arguments = call
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{response_id}",
                    "call_id": f"call_{response_id}",
                    "name": name,
                    "arguments": json.dumps(arguments),
                    "status": "completed",
                }
            )
            answer = json.dumps(arguments)
        else:
            answer = _render(body.get("text"), conversation)
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{response_id}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": answer, "annotations": []}],
                }
            )
        short = isinstance(limit, int) and limit < _SHORT_LIMIT
        used_in, used_out = _usage(conversation, answer)
        with self._lock:
            self.stored[response_id] = [*conversation, answer]
        return 200, {
            "id": response_id,
            "object": "response",
            "created_at": int(time.time()),
            "model": body.get("model"),
            "status": "incomplete" if short else "completed",
            "incomplete_details": {"reason": "max_output_tokens"} if short else None,
            "error": None,
            "output": output,
            "service_tier": "default",
            "store": True,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": tools,
            "usage": {
                "input_tokens": used_in,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": used_out,
                "output_tokens_details": {"reasoning_tokens": 7 if reasoning else 0},
                "total_tokens": used_in + used_out,
            },
        }

    def chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """One ``POST /v1/chat/completions``."""
        messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
        conversation = _texts(messages)
        answered = any(m.get("role") == "tool" for m in messages)
        tools = [t.get("function", t) for t in body.get("tools") or () if isinstance(t, dict)]
        choice = body.get("tool_choice")
        forced = choice.get("function", choice) if isinstance(choice, dict) else choice
        call = _tool_call(tools, forced, conversation) if tools and not answered else None
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if call is not None:
            message["tool_calls"] = [
                {
                    "id": self._new_id("call"),
                    "type": "function",
                    "function": {"name": call[0], "arguments": json.dumps(call[1])},
                }
            ]
            answer, finish = json.dumps(call[1]), "tool_calls"
        else:
            fmt = body.get("response_format")
            schema = fmt.get("json_schema") if isinstance(fmt, dict) else None
            answer = _render({"format": {"type": "json_schema", **schema}} if schema else None, conversation)
            message["content"], finish = answer, "stop"
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        if isinstance(limit, int) and limit < _SHORT_LIMIT:
            finish = "length"
        used_in, used_out = _usage(conversation, answer)
        return 200, {
            "id": self._new_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": used_in, "completion_tokens": used_out, "total_tokens": used_in + used_out},
        }


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}


def _render(text_config: Any, conversation: list[str]) -> str:
    text = _answer_text(conversation)
    fmt = text_config.get("format") if isinstance(text_config, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
        schema = fmt["schema"]
        return json.dumps(_fill(schema, text, schema.get("$defs") or schema.get("definitions") or {}))
    return text


def _tool_call(tools: list[dict[str, Any]], choice: Any, conversation: list[str]) -> tuple[str, Any] | None:
    if choice == "none":
        return None
    name = choice.get("name") if isinstance(choice, dict) else None
    tool = next((t for t in tools if t.get("name") == name), tools[0])
    params = tool.get("parameters") or {}
    arguments = _first_object(conversation)
    wanted = set((params.get("properties") or {}).keys())
    if arguments is None or (wanted and not wanted & set(arguments)):
        arguments = _fill(params, "tool input", params.get("$defs") or {})
    return str(tool.get("name")), arguments


def _handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            """Quiet."""

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _refused(self) -> bool:
            if "invalid" in (self.headers.get("authorization") or "").lower():
                self._send(401, _error("Incorrect API key provided.", "invalid_api_key"))
                return True
            return False

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            if self._refused():
                return
            if self.path.rstrip("/").endswith("/responses"):
                self._send(*model.responses(body))
            elif self.path.rstrip("/").endswith("/chat/completions"):
                self._send(*model.chat(body))
            else:
                self._send(404, _error(f"no route {self.path}", "not_found"))

        def _stored(self) -> str | None:
            response_id = self.path.rstrip("/").rsplit("/", 1)[-1]
            with model._lock:
                return response_id if response_id in model.stored else None

        def do_GET(self) -> None:
            if self._refused():
                return
            found = self._stored()
            if found is None:
                self._send(404, _error("Response not found.", "not_found"))
            else:
                self._send(200, {"id": found, "object": "response", "status": "completed", "output": []})

        def do_DELETE(self) -> None:
            if self._refused():
                return
            found = self._stored()
            if found is None:
                self._send(404, _error("Response not found.", "not_found"))
                return
            with model._lock:
                model.stored.pop(found, None)
            self._send(200, {"id": found, "object": "response.deleted", "deleted": True})

    return Handler


if __name__ == "__main__":
    with FakeModel() as served:
        print(served.url, flush=True)
        threading.Event().wait()
