"""Gemini API payloads shaped like the documented ones, and the SDK-type contract checks.

Response, stream and error bodies follow https://ai.google.dev/api/generate-content
and https://ai.google.dev/gemini-api/docs/troubleshooting. The checks validate what
the plugin formats, and what the SDK puts on the wire, with the SDK's own pydantic
types (which forbid unknown fields), and parse every response fixture with them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from google.genai import types

__all__ = [
    "MODEL",
    "check_payload",
    "check_wire_body",
    "error_body",
    "function_call_part",
    "response",
    "stream_body",
    "text_part",
    "usage",
]

MODEL = "gemini-2.5-flash"

_WIRE_FIELDS = {
    "contents": None,
    "systemInstruction": types.Content,
    "generationConfig": types.GenerationConfig,
    "toolConfig": types.ToolConfig,
    "safetySettings": None,
    "cachedContent": None,
    "tools": None,
}


def check_payload(payload: Mapping[str, Any]) -> None:
    """The formatted payload is ``generate_content`` keyword arguments the SDK types accept."""
    assert set(payload) == {"model", "contents", "config"}, sorted(payload)
    assert isinstance(payload["model"], str)
    for content in payload["contents"]:
        types.Content.model_validate(content)
    types.GenerateContentConfig.model_validate(payload["config"])


def check_wire_body(body: Mapping[str, Any]) -> None:
    """The JSON the SDK sent has only GenerateContentRequest fields, each valid for its SDK type."""
    unknown = set(body) - set(_WIRE_FIELDS)
    assert not unknown, f"fields generateContent does not have: {sorted(unknown)}"
    for content in body["contents"]:
        types.Content.model_validate(content)
    for tool in body.get("tools", ()):
        types.Tool.model_validate(tool)
    for name, model in _WIRE_FIELDS.items():
        if model is not None and name in body:
            model.model_validate(body[name])


def usage(prompt: int = 5, candidates: int = 2, *, thoughts: int = 0, cached: int = 0) -> dict[str, Any]:
    """A ``usageMetadata`` object."""
    metadata: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates + thoughts,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
    }
    if thoughts:
        metadata["thoughtsTokenCount"] = thoughts
    if cached:
        metadata["cachedContentTokenCount"] = cached
    return metadata


def text_part(text: str, *, thought: bool = False) -> dict[str, Any]:
    """A text part (``thought`` marks a thought summary)."""
    return {"text": text, "thought": True} if thought else {"text": text}


def function_call_part(name: str, args: Mapping[str, Any], call_id: str | None = None) -> dict[str, Any]:
    """A functionCall part (Gemini 2.x sends no id)."""
    call: dict[str, Any] = {"name": name, "args": dict(args)}
    if call_id is not None:
        call["id"] = call_id
    return {"functionCall": call}


def response(
    parts: Sequence[Mapping[str, Any]] = (),
    *,
    finish_reason: str | None = "STOP",
    usage_metadata: Mapping[str, Any] | None = None,
    model: str = MODEL,
    response_id: str = "Y2mBaPe0JcS7mtkPrOTR6Qc",
    safety_ratings: Sequence[Mapping[str, Any]] | None = None,
    prompt_feedback: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A GenerateContentResponse body (also one streamed chunk)."""
    body: dict[str, Any] = {"modelVersion": model, "responseId": response_id}
    if prompt_feedback is None or parts:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [dict(p) for p in parts]}, "index": 0}
        if finish_reason is not None:
            candidate["finishReason"] = finish_reason
        if safety_ratings is not None:
            candidate["safetyRatings"] = [dict(r) for r in safety_ratings]
        body["candidates"] = [candidate]
    if usage_metadata is not None:
        body["usageMetadata"] = dict(usage_metadata)
    if prompt_feedback is not None:
        body["promptFeedback"] = dict(prompt_feedback)
    types.GenerateContentResponse.model_validate(body)
    return body


def stream_body(chunks: Sequence[Mapping[str, Any]]) -> bytes:
    """The ``alt=sse`` body of a streamed answer: one ``data:`` event per chunk."""
    return b"".join(f"data: {json.dumps(chunk)}\r\n\r\n".encode() for chunk in chunks)


def error_body(code: int, status: str, message: str, details: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """A Google API error body."""
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = [dict(d) for d in details]
    return {"error": error}
