"""Core Request → the CLI invocation: payload (plain data), argv, environment and stdin."""

from __future__ import annotations

import json
import os
from typing import Any

from llmplex.errors import LLMConfigurationError
from llmplex.types import Message, Request
from llmplex_claude_code.settings import ClaudeCodeSettings

__all__ = ["build_argv", "build_env", "format_request"]

_SUPPORTED_OPTIONS = ("max_tokens",)
_PROVIDER_OPTIONS = ("args",)


def _render_prompt(turns: list[Message]) -> str:
    if len(turns) == 1 and turns[0].role == "user":
        return turns[0].content or ""
    transcript = "\n\n".join(f"{'User' if m.role == 'user' else 'Assistant'}: {m.content or ''}" for m in turns)
    return f"Continue this conversation as the Assistant; answer the last User message.\n\n{transcript}"


def _check(request: Request) -> None:
    if any(m.role == "tool" or m.tool_calls for m in request.messages):  # tools= itself is refused by core
        raise LLMConfigurationError(
            "claude-code does not take llmplex tools or tool messages (the CLI runs its own agent); "
            "use the anthropic: provider for tool calling"
        )
    unsupported = sorted(set(request.config.set_options()) - set(_SUPPORTED_OPTIONS))
    if unsupported:
        raise LLMConfigurationError(
            f"the claude CLI has no option for {', '.join(unsupported)}; supported: {', '.join(_SUPPORTED_OPTIONS)}"
        )
    unknown = sorted(set(request.provider_options) - set(_PROVIDER_OPTIONS))
    if unknown:
        raise LLMConfigurationError(
            f"unknown provider_options {', '.join(unknown)} for claude-code; supported: "
            "args (a list of extra CLI arguments)"
        )
    if not any(m.role == "user" for m in request.messages):
        raise LLMConfigurationError("claude-code needs at least one user message")


def format_request(request: Request) -> dict[str, Any]:
    """The invocation as plain data: model, prompt (for stdin), system prompt, schema, options."""
    _check(request)
    system = "\n\n".join(m.content or "" for m in request.messages if m.role == "system")
    args = request.provider_options.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise LLMConfigurationError(f"provider_options['args'] must be a list of strings, got {args!r}")
    return {
        "model": request.model,
        "prompt": _render_prompt([m for m in request.messages if m.role != "system"]),
        "system_prompt": system or None,
        "json_schema": request.output.json_schema if request.output else None,
        "max_tokens": request.config.max_tokens,
        "stream": request.stream,
        "args": list(args),
    }


def build_argv(cli: str, payload: dict[str, Any], settings: ClaudeCodeSettings) -> list[str]:
    """``claude -p`` with JSON (or stream-json) output; never the prompt, which goes on stdin."""
    stream = bool(payload.get("stream"))
    argv = [cli, "-p", "--output-format", "stream-json" if stream else "json"]
    if stream:
        argv += ["--verbose", "--include-partial-messages"]
    argv += ["--model", payload["model"], "--no-session-persistence", "--tools", ",".join(settings.tools)]
    if payload.get("system_prompt"):
        argv += ["--system-prompt", payload["system_prompt"]]
    if payload.get("json_schema") is not None:
        argv += ["--json-schema", json.dumps(payload["json_schema"], separators=(",", ":"))]
    return argv + list(settings.extra_args) + list(payload.get("args", []))


def build_env(payload: dict[str, Any], settings: ClaudeCodeSettings) -> dict[str, str]:
    """The CLI's environment: ours, with its own API retries off (core retries) and the options it reads."""
    env = dict(os.environ)
    env["CLAUDE_CODE_MAX_RETRIES"] = "0"
    if settings.api_key is not None:
        env["ANTHROPIC_API_KEY"] = settings.api_key.get_secret_value()
    if payload.get("max_tokens") is not None:
        env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(payload["max_tokens"])
    return env
