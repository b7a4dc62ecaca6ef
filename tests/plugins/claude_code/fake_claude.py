"""A stand-in for the `claude` CLI, installed by the tests as an executable named `claude`.

It reproduces what Claude Code 2.1.197 prints in print mode (recorded from the real
CLI against a local Anthropic-API stub): one result object for `--output-format json`,
and system / stream_event / assistant / result lines for `stream-json`, which
requires `--verbose`. Its settings come from files next to the executable, not
from the environment (the provider scrubs the environment it passes on):
``scenario.json`` picks the behaviour (``{"scenario": ..., "text": ..., "structured": ...}``),
every run appends its argv, stdin and whole environment to ``runs.jsonl``, and the
"slow" scenario writes its pids to ``pids.txt``.
"""

import json
import os
import subprocess
import sys
import time
import uuid

MODELS = {
    "haiku": "claude-haiku-4-5-20251001",
    "sonnet": "claude-sonnet-4-5-20250929",
    "opus": "claude-opus-4-1-20250805",
}
SESSION = "5ce037ca-0f57-47c5-a69c-c418b46286d4"
HERE = os.path.dirname(os.path.realpath(__file__))


def settings():
    try:
        with open(os.path.join(HERE, "scenario.json")) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def option(argv, name, default=None):
    return argv[argv.index(name) + 1] if name in argv else default


def usage(input_tokens, output_tokens):
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 3,
        "output_tokens": output_tokens,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
        "inference_geo": "",
        "iterations": [],
        "speed": "standard",
    }


def result(text, model, *, is_error=False, status=None, stop_reason="end_turn", structured=None):
    body = {
        "type": "result",
        "subtype": "success",
        "is_error": is_error,
        "api_error_status": status,
        "duration_ms": 107,
        "duration_api_ms": 0 if is_error else 32,
        "num_turns": 1,
        "result": text,
        "stop_reason": "stop_sequence" if is_error else stop_reason,
        "session_id": SESSION,
        "total_cost_usd": 0 if is_error else 0.000037,
        "usage": usage(0, 0) if is_error else usage(12, 5),
        "modelUsage": {} if is_error else {model: {"inputTokens": 12, "outputTokens": 5, "costUSD": 0.000037}},
        "permission_denials": [],
        "terminal_reason": "completed",
        "fast_mode_state": "off",
        "uuid": str(uuid.uuid4()),
    }
    if structured is not None:
        body["structured_output"] = structured
        body["result"] = json.dumps(structured, separators=(",", ":"))
        body["stop_reason"] = "tool_use"
    return body


def line(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def stream(text, model, final):
    line({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION, "tools": [], "model": model})
    line({"type": "system", "subtype": "status", "status": "requesting", "session_id": SESSION})
    event = lambda e: line({"type": "stream_event", "event": e, "session_id": SESSION, "parent_tool_use_id": None})  # noqa: E731
    if not final["is_error"]:
        message = {"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": []}
        event({"type": "message_start", "message": {**message, "usage": {"input_tokens": 12, "output_tokens": 1}}})
        event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        words = text.split(" ")
        for i, word in enumerate(words):
            event(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": (" " if i else "") + word},
                }
            )
            time.sleep(0.01)
    content = [{"type": "text", "text": final["result"]}]
    assistant = {
        "type": "assistant",
        "message": {"id": "msg_1", "role": "assistant", "model": model, "content": content},
    }
    if final["is_error"]:
        assistant["error"] = "authentication_failed"
    line({**assistant, "parent_tool_use_id": None, "session_id": SESSION})
    if not final["is_error"]:
        event({"type": "content_block_stop", "index": 0})
        event({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}})
        event({"type": "message_stop"})
    line(final)


def main():
    argv = sys.argv[1:]
    if "--version" in argv or "-v" in argv:
        print("2.1.197 (Claude Code)")
        return 0
    prompt = sys.stdin.read()
    with open(os.path.join(HERE, "runs.jsonl"), "a") as f:
        f.write(json.dumps({"argv": argv, "stdin": prompt, "env": dict(os.environ)}) + "\n")
    config = settings()
    scenario = config.get("scenario", "ok")
    output_format = option(argv, "--output-format", "text")
    if "-p" not in argv or output_format not in ("json", "stream-json"):
        print("the fake claude only knows print mode with json or stream-json output", file=sys.stderr)
        return 3
    if output_format == "stream-json" and "--verbose" not in argv:
        print("Error: When using --print, --output-format=stream-json requires --verbose", file=sys.stderr)
        return 1
    model = MODELS.get(option(argv, "--model", "sonnet"), option(argv, "--model"))
    text = config.get("text", "Hello there")

    if scenario == "crash":
        print(f"Error: unexpected failure (key in use: {os.environ.get('ANTHROPIC_API_KEY')})", file=sys.stderr)
        return 2
    if scenario == "garbage":
        print("<html>this is not json</html>")
        return 0
    if scenario == "slow":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        with open(os.path.join(HERE, "pids.txt"), "w") as f:
            f.write(f"{os.getpid()} {child.pid}")
        time.sleep(60)
        return 0

    code = 0
    if scenario == "not_logged_in":
        final, code = result("Not logged in · Please run /login", model, is_error=True), 1
    elif scenario.startswith("api_error:"):
        status = int(scenario.split(":")[1])
        message = {429: "API Error: Request rejected (429) · rate limited", 529: "API Error: 529 overloaded_error"}
        final = result(
            message.get(status, f"API Error: {status} invalid_request_error"), model, is_error=True, status=status
        )
        code = 1
    elif scenario == "max_tokens":
        final = result(text, model, stop_reason="max_tokens")
    else:
        schema = option(argv, "--json-schema")
        structured = json.loads(config["structured"]) if schema else None
        final = result(text, model, structured=structured)
    if output_format == "json":
        line(final)
    else:
        stream(text, model, final)
    return code


sys.exit(main())
