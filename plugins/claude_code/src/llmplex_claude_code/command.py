"""Core Request → the CLI invocation: payload (plain data), argv, environment and stdin."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from llmplex.errors import LLMBadRequestError, LLMConfigurationError
from llmplex.types import Message, Request
from llmplex_claude_code.environment import child_environment
from llmplex_claude_code.options import option_args
from llmplex_claude_code.settings import ClaudeCodeSettings

__all__ = ["SUPPORTED_OPTIONS", "build_argv", "build_env", "check_command_line", "format_request"]

SUPPORTED_OPTIONS = ("max_tokens",)
"""The sampling options the CLI has a flag for."""
_ARGUMENT_LIMIT = 128 * 1024 - 1
"""Bytes in one argument (Linux's MAX_ARG_STRLEN, less the terminating NUL)."""


def _render_prompt(turns: list[Message]) -> str:
    if len(turns) == 1 and turns[0].role == "user":
        return turns[0].text
    transcript = "\n\n".join(f"{'User' if m.role == 'user' else 'Assistant'}: {m.text}" for m in turns)
    return f"Continue this conversation as the Assistant; answer the last User message.\n\n{transcript}"


def _check(request: Request) -> None:
    if any(m.role == "tool" or m.tool_calls for m in request.messages):  # tools= itself is refused by core
        raise LLMConfigurationError(
            "claude-code does not take llmplex tools or tool messages (the CLI runs its own agent); "
            "use the anthropic: provider for tool calling"
        )
    unsupported = sorted(set(request.config.set_options()) - set(SUPPORTED_OPTIONS))
    if unsupported:
        raise LLMConfigurationError(
            f"the claude CLI has no option for {', '.join(unsupported)}; supported: {', '.join(SUPPORTED_OPTIONS)}"
        )
    if not any(m.role == "user" for m in request.messages):
        raise LLMConfigurationError("claude-code needs at least one user message")


def format_request(request: Request) -> dict[str, Any]:
    """The invocation as plain data: model, prompt (for stdin), system prompt, schema, options."""
    _check(request)
    system = "\n\n".join(m.text for m in request.messages if m.role == "system")
    return {
        "model": request.model,
        "prompt": _render_prompt([m for m in request.messages if m.role != "system"]),
        "system_prompt": system or None,
        "json_schema": request.output.json_schema if request.output else None,
        "max_tokens": request.config.max_tokens,
        "stream": request.stream,
        "option_args": option_args(request.provider_options),
    }


def build_argv(cli: str, payload: dict[str, Any], settings: ClaudeCodeSettings) -> list[str]:
    """``claude -p`` with JSON (or stream-json) output; never the prompt, which goes on stdin.

    Values taken from the request (model, system prompt, schema) follow their
    flag as separate arguments, which the CLI reads as values even when they
    start with ``-``.
    """
    stream = bool(payload.get("stream"))
    argv = [cli, "-p", "--output-format", "stream-json" if stream else "json"]
    if stream:
        argv += ["--verbose", "--include-partial-messages"]
    argv += ["--model", payload["model"], "--no-session-persistence", "--tools", ",".join(settings.tools)]
    if payload.get("system_prompt"):
        argv += ["--system-prompt", payload["system_prompt"]]
    if payload.get("json_schema") is not None:
        argv += ["--json-schema", json.dumps(payload["json_schema"], separators=(",", ":"))]
    return argv + list(settings.extra_args) + list(payload.get("option_args", []))


def build_env(payload: dict[str, Any], settings: ClaudeCodeSettings) -> dict[str, str]:
    """The CLI's environment: a scrubbed copy of ours, its API retries off (core retries), the options it reads."""
    env = child_environment(os.environ, settings.pass_env)
    env["CLAUDE_CODE_MAX_RETRIES"] = "0"
    if settings.api_key is not None:
        env["ANTHROPIC_API_KEY"] = settings.api_key.get_secret_value()
    if payload.get("max_tokens") is not None:
        env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(payload["max_tokens"])
    return env


def check_command_line(argv: Sequence[str], env: dict[str, str]) -> None:
    """Refuse, before anything is started, a command line no operating system would run.

    A NUL byte, text that is not valid Unicode, or an argument or whole command
    line over the system's limit is an ``LLMBadRequestError`` naming the flag.
    """
    total = sum(len(os.fsencode(f"{name}={value}")) + 1 + 8 for name, value in env.items())
    for index, argument in enumerate(argv):
        where = _where(argv, index)
        if "\x00" in argument:
            raise LLMBadRequestError(
                f"{where} contains a NUL byte (\\x00), which a command line cannot carry; remove it from the request"
            )
        try:
            size = len(os.fsencode(argument))
        except UnicodeEncodeError:
            raise LLMBadRequestError(f"{where} is not valid Unicode (a lone surrogate); fix the text") from None
        if size > _ARGUMENT_LIMIT:
            raise LLMBadRequestError(
                f"{where} is too long for the claude command line ({size} bytes; at most {_ARGUMENT_LIMIT}): "
                "shorten it, or use the anthropic: provider, which sends it in the request body"
            )
        total += size + 1 + 8
    if total > _command_line_limit():
        raise LLMBadRequestError(
            f"the claude command line is too long ({total} bytes with its environment; at most "
            f"{_command_line_limit()}): shorten the system prompt or output schema"
        )


def _where(argv: Sequence[str], index: int) -> str:
    if index > 0 and argv[index - 1].startswith("--") and not argv[index].startswith("--"):
        return f"the value of {argv[index - 1]}"
    return f"the argument {argv[index][:40]!r}"


def _command_line_limit() -> int:
    try:
        return int(os.sysconf("SC_ARG_MAX"))
    except (AttributeError, ValueError, OSError):
        return 32_767  # Windows: the whole command line
