"""Issue 34 item 4: lean streams on Anthropic and the openai-compatible presets. A stream is read with
``llmplex.http.iter_sse``/``aiter_sse`` and decoded to plain data, as llmplex-openai's; its errors, faults and
deadlines are the same typed errors as through the SDK (each case is run both ways and compared)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from llmplex_anthropic import hooks as anthropic_hooks
from llmplex_anthropic import lean as anthropic_lean
from llmplex_openai import lean as openai_lean
from llmplex_openai import transport as openai_transport

import llmplex
from llmplex import LLMDeadlineExceededError, LLMError
from llmplex.types import Request, StreamState
from tests.support.fault_server import Fault, FaultServer
from tests.support.lean_streams import STREAM_FAULTS, count_reads, drain, outcome

KEY = "sk-ant-lean-0123456789abcdef"
MODEL = "claude-sonnet-4-6"


def _frame(event: dict[str, Any]) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"


START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    },
}
BLOCK = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
DELTAS = [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}} for t in ("Hi", "!")]
END = [
    {"type": "content_block_stop", "index": 0},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 2},
    },
    {"type": "message_stop"},
]
TEXT_STREAM = "".join(_frame(e) for e in [START, BLOCK, *DELTAS, *END]) + "event: ping\ndata: {}\n\n"
ERROR_EVENT = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
ANTHROPIC_BODIES = {
    "error event mid-stream": (200, _frame(START) + _frame(BLOCK) + _frame(DELTAS[0]) + ERROR_EVENT),
    "HTTP 529": (529, json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
    "HTTP 400": (400, json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})),
    "not JSON": (200, _frame(START) + "event: content_block_delta\ndata: {not json\n\n"),
}


class Replies:
    """A local server answering every POST with ``reply`` (status, body): SSE on 200, JSON otherwise."""

    def __init__(self, reply: tuple[int, str]) -> None:
        self.reply = reply
        self.count = 0

    def __enter__(self) -> Replies:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.count += 1
                status, text = owner.reply
                content = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/event-stream" if status == 200 else "application/json")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


def _anthropic(url: str) -> dict[str, Any]:
    return {"providers": {"a": {"plugin": "anthropic", "base_url": url, "api_key": KEY}}}


def _preset(url: str) -> dict[str, Any]:
    return {"providers": {"p": {"plugin": "mistral", "base_url": url + "/v1", "api_key": KEY}}}


read_lean: list[str] = []


@pytest.fixture
def anthropic_via(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], None]:
    """Choose the SDK (``True``) or the lean path for Anthropic; each lean read is counted in ``read_lean``."""
    count_reads(monkeypatch, anthropic_lean, read_lean)
    sender = anthropic_hooks.sender

    def choose(sdk: bool) -> None:
        monkeypatch.setattr(anthropic_hooks, "sender", (lambda *a, **k: None) if sdk else sender)

    return choose


@pytest.fixture
def preset_via(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], None]:
    """The same for an openai-compatible preset (the openai plugin's lean transport under it)."""
    count_reads(monkeypatch, openai_lean, read_lean)

    def choose(sdk: bool) -> None:
        monkeypatch.setattr(openai_transport, "suits", (lambda client: False) if sdk else openai_lean.suits)

    return choose


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_anthropic_stream_is_read_lean_as_plain_data(
    mode: str, anthropic_via: Callable[[bool], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[type] = []
    parse = anthropic_hooks.parse_stream_event
    monkeypatch.setattr(anthropic_hooks, "parse_stream_event", lambda e, s: (seen.append(type(e)), parse(e, s))[1])
    finals = []
    with Replies((200, TEXT_STREAM)) as server:
        for sdk in (True, False):
            anthropic_via(sdk)
            client = llmplex.Client(_anthropic(server.url))
            events = drain(client, mode, f"a:{MODEL}")
            client.close()
            final = events[-1].response
            finals.append((final.text, final.usage, final.finish_reason, final.response_id, final.model))
    assert read_lean == ["iter_sse" if mode == "stream" else "aiter_sse"]
    assert finals[0] == finals[1] and finals[1][:1] == ("Hi!",)
    lean_types = seen[len(seen) // 2 :]
    assert lean_types and set(lean_types) == {dict}  # no SDK model built per chunk
    assert dict not in set(seen[: len(seen) // 2])  # the SDK path still yields its models


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("name", list(ANTHROPIC_BODIES))
def test_item_4_anthropic_stream_errors_are_the_sdks_typed_errors(
    name: str, mode: str, anthropic_via: Callable[[bool], None]
) -> None:
    outcomes = []
    with Replies(ANTHROPIC_BODIES[name]) as server:
        for sdk in (True, False):
            anthropic_via(sdk)
            outcomes.append(outcome(_anthropic(server.url), f"a:{MODEL}", mode))
    opened = ANTHROPIC_BODIES[name][0] == 200
    assert read_lean == ([("iter_sse" if mode == "stream" else "aiter_sse")] if opened else [])
    assert outcomes[0][0] is outcomes[1][0] is not LLMError, name
    assert outcomes[0][2] == outcomes[1][2] == ("Hi" if name == "error event mid-stream" else "")
    if name != "not JSON":  # that message quotes the JSON decoder's own words (the SDK's json, orjson here)
        assert outcomes[0][1] == outcomes[1][1]


FAULTS: dict[str, Callable[[], Fault]] = {
    "connection reset": Fault.reset,
    "rate limit": lambda: Fault.rate_limit(retry_after=2),
    "server error": Fault.server_error,
}


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("name", list(FAULTS))
def test_item_4_anthropic_faults_are_the_same_typed_errors(
    name: str, mode: str, anthropic_via: Callable[[bool], None]
) -> None:
    outcomes = []
    with FaultServer(any_path=True) as server:
        for sdk in (True, False):
            anthropic_via(sdk)
            server.enqueue(FAULTS[name]())
            outcomes.append(outcome(_anthropic(server.url.removesuffix("/v1")), f"a:{MODEL}", mode)[0])
    assert outcomes[0] is outcomes[1] is not LLMError, name


@pytest.mark.parametrize("fault", ["trickle", "stall"])
@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_anthropic_trickling_or_stalled_stream_ends_at_the_deadline(
    mode: str, fault: str, anthropic_via: Callable[[bool], None]
) -> None:
    chosen = Fault.trickle(interval=0.05) if fault == "trickle" else Fault.stream_stall(after_events=2, seconds=5)
    with FaultServer(any_path=True) as server:
        anthropic_via(False)
        server.enqueue(chosen)
        config = _anthropic(server.url.removesuffix("/v1"))
        ended = outcome(config, f"a:{MODEL}", mode, deadline_after=2.0)[0]
    assert read_lean  # the lean path was the one held to the deadline
    assert ended is LLMDeadlineExceededError


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("name", list(STREAM_FAULTS))
def test_item_4_preset_stream_is_lean_and_faults_are_the_sdks_errors(
    name: str, mode: str, preset_via: Callable[[bool], None]
) -> None:
    outcomes = []
    with FaultServer() as server:
        for sdk in (True, False):
            preset_via(sdk)
            server.enqueue(STREAM_FAULTS[name]())
            outcomes.append(outcome(_preset(server.url.removesuffix("/v1")), "p:m", mode))
    if name in ("stream cut after 2 events", "malformed event"):
        assert read_lean == ["iter_sse" if mode == "stream" else "aiter_sse"]
    assert outcomes[0][0] is outcomes[1][0] is not LLMError, name
    assert outcomes[0][2] == outcomes[1][2]


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_preset_stalled_stream_ends_at_the_deadline(mode: str, preset_via: Callable[[bool], None]) -> None:
    with FaultServer() as server:
        preset_via(False)
        server.enqueue(Fault.stream_stall(after_events=2, seconds=5))
        config = _preset(server.url.removesuffix("/v1"))
        ended = outcome(config, "p:m", mode, deadline_after=2.0)[0]
    assert read_lean
    assert ended is LLMDeadlineExceededError


def test_item_4_hostile_anthropic_event_that_is_not_an_object_yields_nothing() -> None:
    """A data line holding JSON that is not an object (a server's garbage) gives no core event, no crash."""
    state = StreamState(request=Request(model=MODEL, messages=[]))
    for garbage in ([1, 2], "text", 7, None, {"type": "content_block_delta", "index": 0, "delta": None}):
        assert anthropic_hooks.parse_stream_event(garbage, state) == []
