"""The claude-code plugin passes the conformance kit against a fake `claude` executable answering from a queue.

The kit's hooks script the CLI's print-mode output (one result object for
``--output-format json``; system / stream_event / assistant / result lines for
``stream-json``, shaped like fake_claude.py's recording of Claude Code 2.1.197),
and what the fake received (argv, stdin, ``CLAUDE_CODE_*`` environment) is the wire,
read back into the kit's terms by :func:`read_run`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llmplex.client import Client
from llmplex.testing import FakeError, Observed, ProviderConformanceTests, Reply
from llmplex.testing.http_wire import BAD_GATEWAY_PAGE
from llmplex.testing.sent import SentMessage, SentRequest
from tests.plugins.claude_code.conftest import write_executable

FAKE_SOURCE = Path(__file__).with_name("queued_claude.py")
MODEL = "haiku"
FULL_MODEL = "claude-haiku-4-5-20251001"  # what the CLI reports in modelUsage for the alias
SESSION = "0b6f2d1e-5c4a-4e8b-9f3d-2a7c1e9b8d60"
API_ERRORS: dict[str, tuple[int, str, str]] = {
    "bad_request": (400, "invalid_request_error", ""),
    "authentication": (401, "authentication_error", "invalid x-api-key. "),
    "forbidden": (403, "permission_error", ""),
    "not_found": (404, "not_found_error", "model: claude-kit-missing. "),
    "request_timeout": (408, "timeout_error", ""),
    "conflict": (409, "invalid_request_error", ""),
    "too_large": (413, "request_too_large", ""),
    "unprocessable": (422, "invalid_request_error", ""),
    "rate_limit": (429, "rate_limit_error", ""),
    "quota": (400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. "),
    "server": (500, "api_error", "Internal server error. "),
    "unavailable": (503, "api_error", ""),
    "overloaded": (529, "overloaded_error", "Overloaded. "),
}
"""Kind → the API status the CLI reports in ``api_error_status``, the Anthropic error type, a message prefix."""
CLI_ERRORS = {"connection": "API Error: Connection error.", "timeout": "API Error: Request timed out."}
"""Kinds the CLI reports without a status: the API could not be reached or did not answer in time."""


class QueuedCLI:
    """The fake executable in its own directory, its answer queue and the runs it received."""

    def __init__(self, directory: Path) -> None:
        self.path = write_executable(directory, FAKE_SOURCE, " -S")
        self.queue = directory / "queue.json"
        self.queue.write_text("[]")
        self.runs = directory / "runs.jsonl"

    def push(
        self, output_format: str, lines: list[dict[str, Any]], exit_code: int = 0, stderr: str = "", delay: float = 0.0
    ) -> None:
        """Queue the output of the next run, given after ``delay`` seconds."""
        answers = json.loads(self.queue.read_text())
        answer = {"output_format": output_format, "lines": lines, "exit_code": exit_code, "stderr": stderr}
        answers.append({**answer, "delay": delay})
        self.queue.write_text(json.dumps(answers))

    def received(self) -> list[dict[str, Any]]:
        """What every run so far was given: argv, stdin and the ``CLAUDE_CODE_*`` environment."""
        if not self.runs.exists():
            return []
        return [json.loads(line) for line in self.runs.read_text().splitlines()]


def cli_usage(input_tokens: int, output_tokens: int, cached: int = 0) -> dict[str, Any]:
    """Anthropic-style counts: cache reads apart from input."""
    return {
        "input_tokens": input_tokens - cached,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cached,
        "output_tokens": output_tokens,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
    }


STOP = {"stop": "end_turn", "length": "max_tokens", "refusal": "refusal"}


def _stop(reply: Reply | None) -> str:
    if reply is None:
        return "stop_sequence"
    return "refusal" if reply.refusal else STOP.get(reply.finish, "end_turn")


def result_line(text: str, *, reply: Reply | None = None, status: int | None = None) -> dict[str, Any]:
    """The CLI's result object: a successful answer from ``reply``, or an ``is_error`` result."""
    usage = reply.usage if reply else None
    return {
        "type": "result",
        "subtype": "success",
        "is_error": reply is None,
        "api_error_status": status,
        "duration_ms": 107,
        "duration_api_ms": 32 if reply else 0,
        "num_turns": 1,
        "result": text,
        "stop_reason": _stop(reply),
        "session_id": reply.response_id if reply else SESSION,
        "total_cost_usd": 0.000037 if reply else 0,
        "usage": cli_usage(usage.input_tokens, usage.output_tokens, usage.cached_tokens) if usage else cli_usage(0, 0),
        "modelUsage": {FULL_MODEL: {"inputTokens": 11, "outputTokens": 7}} if reply else {},
        "permission_denials": [],
        "uuid": "4f1c7a52-8d3e-4b6a-a1f0-6e2d9c3b7a18",
    }


def stream_event(event: dict[str, Any], session: str) -> dict[str, Any]:
    return {"type": "stream_event", "event": event, "session_id": session, "parent_tool_use_id": None}


def stream_lines(text: str, final: dict[str, Any], deltas: list[str]) -> list[dict[str, Any]]:
    """``stream-json`` output (with ``--verbose --include-partial-messages``) ending in ``final``."""
    session = final["session_id"]
    lines: list[dict[str, Any]] = [
        {"type": "system", "subtype": "init", "session_id": session, "tools": [], "model": FULL_MODEL}
    ]
    message = {"id": "msg_kit", "type": "message", "role": "assistant", "model": FULL_MODEL, "content": []}
    if deltas:
        lines.append(stream_event({"type": "message_start", "message": message}, session))
        start = {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}
        lines.append(stream_event(start, session))
        for delta in deltas:
            piece = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": delta}}
            lines.append(stream_event(piece, session))
    assistant = {**message, "content": [{"type": "text", "text": text}]}
    lines.append({"type": "assistant", "message": assistant, "parent_tool_use_id": None, "session_id": session})
    if deltas:
        lines.append(stream_event({"type": "content_block_stop", "index": 0}, session))
        lines.append(stream_event({"type": "message_delta", "delta": {"stop_reason": final["stop_reason"]}}, session))
        lines.append(stream_event({"type": "message_stop"}, session))
    return [*lines, final]


def error_text(error: FakeError) -> tuple[str, int | None]:
    """The result text and ``api_error_status`` the CLI reports for ``error.kind``."""
    if error.kind in CLI_ERRORS:
        return f"{CLI_ERRORS[error.kind]} {error.message}", None
    if error.kind == "bad_gateway":
        return f"API Error: 502 {BAD_GATEWAY_PAGE}", 502
    status, kind, prefix = API_ERRORS[error.kind]
    body = {"type": "error", "error": {"type": kind, "message": prefix + error.message}, "request_id": "req_kit"}
    return f"API Error: {status} {json.dumps(body)}", status


TRANSCRIPT = "Continue this conversation as the Assistant; answer the last User message.\n\n"


def _turns(prompt: str) -> tuple[SentMessage, ...]:
    """The prompt on stdin: one user turn, or the plugin's User:/Assistant: transcript of several."""
    if not prompt.startswith(TRANSCRIPT):
        return (SentMessage("user", prompt),)
    turns = []
    for block in prompt.removeprefix(TRANSCRIPT).split("\n\n"):
        speaker, _, text = block.partition(": ")
        turns.append(SentMessage("user" if speaker == "User" else "assistant", text))
    return tuple(turns)


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def read_run(run: dict[str, Any]) -> SentRequest:
    """One run of the CLI (argv, stdin, environment) in the kit's terms."""
    argv, env = run["argv"], run["env"]
    system, schema = _flag(argv, "--system-prompt"), _flag(argv, "--json-schema")
    limit = env.get("CLAUDE_CODE_MAX_OUTPUT_TOKENS")
    return SentRequest(
        model=_flag(argv, "--model"),
        system=(system,) if system else (),
        messages=_turns(run["stdin"]),
        options={"max_tokens": int(limit)} if limit else {},
        stream=_flag(argv, "--output-format") == "stream-json",
        output_schema=json.loads(schema) if schema else None,
        raw=run,
    )


class TestClaudeCodeConformance(ProviderConformanceTests):
    prefix = "claude-code"
    model = MODEL
    supports_native_structured_output = True
    supports_streaming = True
    supports_async = True
    reports_retry_after = False  # the CLI relays no response headers: a requested wait never reaches the plugin
    usage_fields = frozenset({"input_tokens", "output_tokens", "cached_tokens"})

    @pytest.fixture
    def transport(self, tmp_path: Path) -> QueuedCLI:
        return QueuedCLI(tmp_path / "fake-claude")

    @pytest.fixture
    def llm(self, observed: Observed, transport: QueuedCLI) -> Client:
        """The kit's client, its provider's ``cli_path`` pointing at the fake CLI."""
        return Client(
            providers={self.prefix: {**self.provider_settings(), "cli_path": str(transport.path)}},
            throttle={"max_attempts": 1},
            plugins=[observed],
        )

    def fake_response(self, transport: QueuedCLI, reply: Reply) -> None:
        text = reply.refusal or reply.text
        transport.push("json", [result_line(text, reply=reply)], delay=reply.delay)

    def fake_stream(self, transport: QueuedCLI, reply: Reply) -> None:
        text = reply.refusal or reply.text
        words = text.split(" ")
        deltas = [words[0], *(" " + w for w in words[1:])] if text else []
        lines = stream_lines(text, result_line(text, reply=reply), deltas)
        transport.push("stream-json", lines, delay=reply.delay)

    def fake_error(self, transport: QueuedCLI, error: FakeError) -> None:
        if error.kind == "timeout":
            self.fake_stall(transport, 60)
            return
        text, status = error_text(error)
        transport.push("json", [result_line(text, status=status)], exit_code=1)

    def fake_stall(self, transport: QueuedCLI, seconds: float) -> None:
        transport.push("json", [result_line("too late", reply=self.reply("too late"))], delay=seconds)

    def sent_payloads(self, transport: QueuedCLI) -> list[dict[str, Any]]:
        return transport.received()

    def sent_requests(self, transport: QueuedCLI) -> list[SentRequest]:
        return [read_run(run) for run in transport.received()]
