"""Reasoning state and prompt caching on OpenAI's APIs.

The Responses API answers with ``reasoning`` output items (an ``id``, a
``summary`` and, when asked with ``include=["reasoning.encrypted_content"]``,
the ``encrypted_content`` a request that stores nothing needs to continue).
Each item is kept whole as a ``ReasoningPart`` and sent back, unchanged, in
the input of the next turn, before the calls it led to. ``prompt_cache="auto"``
gives OpenAI's own API a ``prompt_cache_key`` derived from the request's stable
prefix (model, tools, system prompt), so that calls sharing it are routed to
the same cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from llmplex.types import Message, ReasoningPart, Request
from llmplex_openai.wire_json import as_json

__all__ = ["ENCRYPTED", "FORMAT", "prompt_cache_key", "reasoning_items", "reasoning_part"]

FORMAT = "openai-responses"
"""``ReasoningPart.format`` of Responses API reasoning items."""

ENCRYPTED = "reasoning.encrypted_content"
"""The ``include`` value that makes the API return reasoning items' ``encrypted_content``."""


def reasoning_part(item: Any) -> ReasoningPart:
    """A ``reasoning`` output item (decoded JSON or the SDK's model) as an opaque part; its summary as text."""
    data = as_json(item)
    if not isinstance(data, Mapping):
        data = {"type": "reasoning"}
    summary = data.get("summary") or ()
    text = "\n\n".join(s.get("text") or "" for s in summary if isinstance(s, Mapping))
    return ReasoningPart(format=FORMAT, text=text, data=dict(data))


def reasoning_items(message: Message) -> list[dict[str, Any]]:
    """The reasoning items an assistant message carries, exactly as they came."""
    return [dict(part.data) for part in message.reasoning if part.format == FORMAT]


def prompt_cache_key(request: Request) -> str:
    """A key naming the request's stable prefix: its model, tool declarations and system prompt."""
    prefix = {
        "model": request.model,
        "tools": [[t.name, t.description, t.parameters] for t in request.tools],
        "system": [m.text for m in request.messages if m.role == "system"],
    }
    digest = hashlib.sha256(json.dumps(prefix, sort_keys=True, default=repr).encode()).hexdigest()
    return f"llmplex-{digest[:32]}"
