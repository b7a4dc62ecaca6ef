"""The ``anthropic-beta`` header: the betas whose features the gateway serves, and the others, named as ignored.

A beta never makes a request fail: the ``?beta=true`` query the SDK's beta client adds is ignored, and each
beta the gateway does not know is named in ``x-llmplex-dropped`` (``anthropic-beta NAME``).
"""

from __future__ import annotations

__all__ = ["SERVED_BETAS", "unknown_betas"]

SERVED_BETAS = (
    "mid-conversation-system-",
    "interleaved-thinking-",
    "prompt-caching-",
    "token-counting-",
    "token-efficient-tools-",
    "fine-grained-tool-streaming-",
    "effort-",
    "structured-outputs-",
    "output-128k-",
    "claude-code-",
    "oauth-",
    "adaptive-thinking-",
)
"""Prefixes (a beta's name without its date) of the betas whose features the gateway serves on every
provider: system turns anywhere, thinking between tool calls, cache marks, token counting, tool input streamed as
it is written, effort levels, structured output, long answers; Claude Code's own identification betas."""


def unknown_betas(header: str) -> list[str]:
    """The betas of an ``anthropic-beta`` header the gateway does not serve, each as ``anthropic-beta NAME``."""
    names = dict.fromkeys(name.strip() for name in header.split(",") if name.strip())
    return [f"anthropic-beta {name}" for name in names if not name.startswith(SERVED_BETAS)]
