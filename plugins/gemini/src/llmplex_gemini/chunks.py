"""Which streamed chunks the lean path hands on as plain data, and the SDK's reading of the others.

A chunk is handed on as its decoded JSON only when every field in it is one the
parser reads and holds a value the SDK's model would take as it is (a string, a
whole number, a known enum value...). Anything else (safety ratings, citations,
grounding, a prompt block, a continuation token, an unknown field, a value the
SDK would coerce or refuse) is read by the SDK's own model, as the SDK's stream
reads every chunk, so its result, or its exception, is the SDK's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.genai import models, types

__all__ = ["is_plain", "sdk_chunk"]

_FINISH_REASONS = frozenset(reason.value for reason in types.FinishReason)
_MODALITIES = frozenset(modality.value for modality in types.MediaModality)
_COUNTS = frozenset(
    {
        "promptTokenCount",
        "candidatesTokenCount",
        "totalTokenCount",
        "cachedContentTokenCount",
        "thoughtsTokenCount",
        "toolUsePromptTokenCount",
    }
)
_DETAILS = frozenset(
    {"promptTokensDetails", "cacheTokensDetails", "candidatesTokensDetails", "toolUsePromptTokensDetails"}
)


def _is(value: Any, kind: type) -> bool:
    """``value`` is null or exactly of ``kind`` (no bool for int: pydantic would coerce it)."""
    return value is None or type(value) is kind


def _part(part: Any) -> bool:
    if type(part) is not dict:
        return False
    for key, value in part.items():
        if key == "text":
            ok = _is(value, str)
        elif key == "thought":
            ok = _is(value, bool)
        elif key == "functionCall":
            ok = value is None or (
                type(value) is dict
                and all(
                    (k in ("id", "name") and _is(v, str)) or (k == "args" and _is(v, dict)) for k, v in value.items()
                )
            )
        else:
            ok = False
        if not ok:
            return False
    return True


def _content(content: Any) -> bool:
    if content is None:
        return True
    if type(content) is not dict:
        return False
    parts = content.get("parts")
    return (
        content.keys() <= {"role", "parts"}
        and _is(content.get("role"), str)
        and (parts is None or (type(parts) is list and all(_part(p) for p in parts)))
    )


def _candidate(candidate: Any) -> bool:
    if type(candidate) is not dict:
        return False
    for key, value in candidate.items():
        if key == "content":
            ok = _content(value)
        elif key == "finishReason":
            ok = value is None or (type(value) is str and value in _FINISH_REASONS)
        elif key == "index":
            ok = _is(value, int)
        elif key == "finishMessage":
            ok = _is(value, str)
        else:
            ok = False
        if not ok:
            return False
    return True


def _detail(detail: Any) -> bool:
    return (
        type(detail) is dict
        and detail.keys() <= {"modality", "tokenCount"}
        and (detail.get("modality") is None or detail.get("modality") in _MODALITIES)
        and _is(detail.get("tokenCount"), int)
    )


def _usage(usage: Any) -> bool:
    if usage is None:
        return True
    if type(usage) is not dict:
        return False
    for key, value in usage.items():
        if key in _COUNTS:
            ok = _is(value, int)
        elif key in _DETAILS:
            ok = value is None or (type(value) is list and all(_detail(d) for d in value))
        else:
            ok = False
        if not ok:
            return False
    return True


def is_plain(chunk: Any) -> bool:
    """Whether the parser may read ``chunk`` (decoded JSON) as it is: what it reads is what the SDK's model
    would hold."""
    if type(chunk) is not dict:
        return False
    for key, value in chunk.items():
        if key == "candidates":
            ok = value is None or (type(value) is list and all(_candidate(c) for c in value))
        elif key == "usageMetadata":
            ok = _usage(value)
        elif key in ("modelVersion", "responseId"):
            ok = _is(value, str)
        else:
            ok = False
        if not ok:
            return False
    return True


def sdk_chunk(chunk: Any, parameters: Any, headers: Mapping[str, str]) -> types.GenerateContentResponse:
    """The SDK's ``GenerateContentResponse`` for one decoded chunk, built as ``Models._generate_content_stream``
    builds it (its converter, its model, the response headers); its exceptions are the SDK's."""
    converted = models._GenerateContentResponse_from_mldev(chunk, None, parameters)
    config = getattr(parameters, "config", None)
    kwargs: dict[str, Any] = {}
    if config is not None:
        kwargs = {
            "config": {
                "response_schema": getattr(config, "response_schema", None),
                "response_json_schema": getattr(config, "response_json_schema", None),
                "include_all_fields": getattr(config, "include_all_fields", None),
            }
        }
    response = types.GenerateContentResponse._from_response(response=converted, kwargs=kwargs)
    response.sdk_http_response = types.HttpResponse(headers=dict(headers))
    return response
