"""Token counts from the model's own tokenizer: llama.cpp's server applies the model's chat template
(``POST /apply-template``, tools included) and tokenizes the prompt that gives (``POST /tokenize``)."""

from __future__ import annotations

from typing import Any

import httpx

__all__ = ["count_prompt_tokens"]

_COUNT_TIMEOUT = 60.0
"""Seconds each of the two requests may take (tokenizing is fast; a long prompt's template is not slow)."""


async def count_prompt_tokens(base_url: str, payload: dict[str, Any]) -> int:
    """The prompt tokens the Chat Completions ``payload`` is, on the server at ``base_url`` (its ``/v1`` root)."""
    root = base_url.rstrip("/").removesuffix("/v1")
    body = {key: payload[key] for key in ("messages", "tools", "tool_choice") if key in payload}
    async with httpx.AsyncClient(timeout=_COUNT_TIMEOUT) as http:
        templated = await http.post(root + "/apply-template", json=body)
        templated.raise_for_status()
        prompt = templated.json()["prompt"]
        tokenized = await http.post(root + "/tokenize", json={"content": prompt, "add_special": True})
        tokenized.raise_for_status()
        return len(tokenized.json()["tokens"])
