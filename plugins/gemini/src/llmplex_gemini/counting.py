"""Token counts by Gemini's own ``countTokens``.

On Vertex AI the count takes the request's system instruction and tools as they are. The Gemini Developer
API counts only contents (the SDK refuses a system instruction or tools there), so the system instruction and
the tools' declarations (as JSON) are counted as a leading user part: the same tokenizer on the same text,
without the few tokens of the template that frames them.
"""

from __future__ import annotations

import json
from typing import Any

from google import genai
from google.genai import types

from llmplex_gemini.request import url_model

__all__ = ["count_tokens"]


async def count_tokens(client: genai.Client, payload: dict[str, Any]) -> int:
    """The input tokens of the ``generate_content`` ``payload`` (``model``, ``contents``, ``config``)."""
    config = payload.get("config") or {}
    system = config.get("system_instruction")
    tools = config.get("tools")
    contents = list(payload["contents"])
    model = url_model(payload["model"])  # into the URL (models/{model}:countTokens): percent-encoded, or refused
    if client.vertexai:
        counted = await client.aio.models.count_tokens(
            model=model,
            contents=contents,
            config=types.CountTokensConfig(system_instruction=system or None, tools=tools or None),
        )
    else:
        framing = [text for text in (system, json.dumps(tools, default=str) if tools else None) if text]
        if framing:
            contents = [{"role": "user", "parts": [{"text": "\n\n".join(map(str, framing))}]}, *contents]
        counted = await client.aio.models.count_tokens(model=model, contents=contents)
    return int(counted.total_tokens or 0)
