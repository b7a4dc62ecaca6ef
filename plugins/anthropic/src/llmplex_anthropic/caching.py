"""Prompt-cache breakpoints: ``cache_control`` on the blocks the request marks, or on the stable prefix.

A breakpoint caches the prompt up to and including its block, in the order the
API reads it: tools, then the system prompt, then the messages. ``cache=True``
on a ``Tool``, a system or other ``Message`` or a content part marks its block;
``prompt_cache="auto"`` adds breakpoints on the last tool, the system prompt
and the last block of the conversation, as many as the limit leaves room for.
The API takes at most ``MAX_BREAKPOINTS`` per request: more explicit marks are
an ``LLMConfigurationError`` before anything is sent.
"""

from __future__ import annotations

from typing import Any

from llmplex.errors import LLMConfigurationError

__all__ = ["EPHEMERAL", "MAX_BREAKPOINTS", "count_breakpoints", "mark", "mark_last_markable", "place_breakpoints"]

MAX_BREAKPOINTS = 4
"""The most ``cache_control`` breakpoints one Messages API request may carry."""

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
"""The cache-control value of a breakpoint (the API's default five-minute cache)."""

_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})
"""Blocks the API refuses ``cache_control`` on."""


def mark(block: dict[str, Any]) -> dict[str, Any]:
    """``block`` with a breakpoint (a copy; the caller's block is left alone)."""
    return {**block, "cache_control": dict(EPHEMERAL)}


def count_breakpoints(payload: dict[str, Any]) -> int:
    """How many blocks of ``payload`` carry ``cache_control``."""
    system = payload.get("system")
    blocks = list(payload.get("tools") or ()) + (list(system) if isinstance(system, list) else [])
    for turn in payload.get("messages") or ():
        if isinstance(turn["content"], list):
            blocks.extend(turn["content"])
    return sum(1 for block in blocks if "cache_control" in block)


def place_breakpoints(payload: dict[str, Any], auto: bool) -> None:
    """Refuse more explicit breakpoints than the API takes; with ``auto``, add them on the stable prefix."""
    count = count_breakpoints(payload)
    if count > MAX_BREAKPOINTS:
        raise LLMConfigurationError(
            f"the Anthropic Messages API takes at most {MAX_BREAKPOINTS} cache breakpoints per request, and this "
            f"one marks {count} (cache=True on tools, messages and parts): mark fewer, the last tool, the system "
            'prompt and the last message are enough (prompt_cache="auto" places those)'
        )
    if not auto:
        return
    for place in (_last_tool, _system, _last_block):
        if count >= MAX_BREAKPOINTS:
            return
        count += place(payload)


def _last_tool(payload: dict[str, Any]) -> int:
    tools = payload.get("tools")
    if not tools or any("cache_control" in tool for tool in tools):
        return 0
    tools[-1] = mark(tools[-1])
    return 1


def _system(payload: dict[str, Any]) -> int:
    system = payload.get("system")
    if not system:
        return 0
    if isinstance(system, str):
        payload["system"] = [mark({"type": "text", "text": system})]
        return 1
    if any("cache_control" in block for block in system):
        return 0
    system[-1] = mark(system[-1])
    return 1


def _last_block(payload: dict[str, Any]) -> int:
    turns = payload.get("messages")
    if not turns:
        return 0
    turn = turns[-1]
    if isinstance(turn["content"], str):
        turn["content"] = [mark({"type": "text", "text": turn["content"]})]
        return 1
    blocks = turn["content"]
    for position in range(len(blocks) - 1, -1, -1):
        if "cache_control" in blocks[position]:
            return 0
        if blocks[position]["type"] not in _UNMARKABLE:
            blocks[position] = mark(blocks[position])
            return 1
    return 0


def mark_last_markable(blocks: list[dict[str, Any]]) -> None:
    """Mark the last block of one message that the API lets carry a breakpoint (not a thinking block)."""
    for position in range(len(blocks) - 1, -1, -1):
        if blocks[position]["type"] not in _UNMARKABLE:
            blocks[position] = mark(blocks[position])
            return
