"""What each model family on Vertex AI can do, read from the plugin that translates it."""

from __future__ import annotations

from typing import Any

from llmplex_anthropic import hooks as anthropic_hooks
from llmplex_gemini import hooks as gemini_hooks

from llmplex.provider import Capabilities, ProviderInfo

__all__ = ["CLAUDE_ON_VERTEX", "GEMINI_ON_VERTEX"]


def _registered(hooks: Any) -> Capabilities:
    found: list[ProviderInfo] = []
    hooks.llmplex_register_providers(register=found.append)
    return found[0].capabilities


GEMINI_ON_VERTEX: Capabilities = _registered(gemini_hooks)
"""The gemini plugin's capabilities: what the ``vertex`` prefix declares."""

_CLAUDE = _registered(anthropic_hooks)
CLAUDE_ON_VERTEX: dict[str, Any] = {
    "native_structured_output": _CLAUDE.native_structured_output,
    "sampling_options": _CLAUDE.sampling_options,
    "input_parts": _CLAUDE.input_parts,
    "prompt_cache": _CLAUDE.prompt_cache,
    "reasoning_formats": _CLAUDE.reasoning_formats,
    "options_note": _CLAUDE.options_note,
    "embeddings": False,
    "embedding_dimensions": False,
}
"""Where Claude models on Vertex differ from the Gemini side: the anthropic plugin's options, parts, prompt
cache and reasoning; no embeddings."""
