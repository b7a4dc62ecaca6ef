"""Which streamed chunks the lean path hands on as plain data, and the SDK's reading of the others.

A chunk is handed on as its decoded JSON only when every field in it is one the
parser reads and holds a value the SDK's model would take as it is (a string, a
whole number, a known enum value...). Anything else (safety ratings, citations,
grounding, a prompt block, a continuation token, an unknown field, a value the
SDK would coerce or refuse) is read by the SDK's own model, as the SDK's stream
reads every chunk, so its result, or its exception, is the SDK's. The common
chunk (text and thoughts, token counts) is checked and read in one walk
(``text_chunk``), which hands on what the parser needs, its text events built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from google.genai import models, types

from llmplex.types import StreamEvent

__all__ = ["TextChunk", "is_plain", "sdk_chunk", "text_chunk"]

_Check = Callable[[Any], bool]
"""Whether a decoded JSON value is one the SDK's model would hold as it is."""


def _kind(kind: type) -> _Check:
    """Null, or exactly of ``kind`` (no bool for an int: pydantic would coerce it)."""
    return lambda value: value is None or type(value) is kind


def _one_of(values: frozenset[str]) -> _Check:
    """Null, or one of the strings ``values`` (an enum's wire values)."""
    return lambda value: value is None or (type(value) is str and value in values)


def _list_of(item: _Check) -> _Check:
    """Null, or a list whose every item passes ``item``."""
    return lambda value: value is None or (type(value) is list and all(item(v) for v in value))


def _object(fields: dict[str, _Check], *, nullable: bool = True) -> _Check:
    """An object (null when ``nullable``) of only ``fields``, each passing its check."""

    def check(value: Any) -> bool:
        if value is None:
            return nullable
        return type(value) is dict and all(key in fields and fields[key](v) for key, v in value.items())

    return check


_COUNT = _kind(int)
_DETAILS = _list_of(
    _object(
        {"modality": _one_of(frozenset(m.value for m in types.MediaModality)), "tokenCount": _COUNT}, nullable=False
    )
)
_PART = _object(
    {
        "text": _kind(str),
        "thought": _kind(bool),
        "functionCall": _object({"id": _kind(str), "name": _kind(str), "args": _kind(dict)}),
    },
    nullable=False,
)
_CANDIDATE = _object(
    {
        "content": _object({"role": _kind(str), "parts": _list_of(_PART)}),
        "finishReason": _one_of(frozenset(reason.value for reason in types.FinishReason)),
        "index": _COUNT,
        "finishMessage": _kind(str),
    },
    nullable=False,
)
_USAGE = _object(
    {
        **dict.fromkeys(
            (
                "promptTokenCount",
                "candidatesTokenCount",
                "totalTokenCount",
                "cachedContentTokenCount",
                "thoughtsTokenCount",
                "toolUsePromptTokenCount",
            ),
            _COUNT,
        ),
        **dict.fromkeys(
            ("promptTokensDetails", "cacheTokensDetails", "candidatesTokensDetails", "toolUsePromptTokensDetails"),
            _DETAILS,
        ),
    }
)
_CHUNK = _object(
    {
        "candidates": _list_of(_CANDIDATE),
        "usageMetadata": _USAGE,
        "modelVersion": _kind(str),
        "responseId": _kind(str),
    },
    nullable=False,
)


_CHUNK_KEYS = frozenset({"candidates", "usageMetadata", "modelVersion", "responseId"})
_CANDIDATE_KEYS = frozenset({"content", "finishReason", "index", "finishMessage"})
_CONTENT_KEYS = frozenset({"role", "parts"})
_TEXT_KEYS = frozenset({"text", "thought"})
_COUNT_KEYS = frozenset(
    {
        "promptTokenCount",
        "candidatesTokenCount",
        "totalTokenCount",
        "cachedContentTokenCount",
        "thoughtsTokenCount",
        "toolUsePromptTokenCount",
    }
)
_DETAIL_KEYS = frozenset(
    {"promptTokensDetails", "cacheTokensDetails", "candidatesTokensDetails", "toolUsePromptTokensDetails"}
)
_MODALITY_KEYS = frozenset({"modality", "tokenCount"})
_MODALITIES = frozenset(modality.value for modality in types.MediaModality)
_REASONS = frozenset(reason.value for reason in types.FinishReason)


TextChunk = tuple[
    list[StreamEvent], list[Any] | None, bool, dict[str, Any] | None, str | None, str | None, str | None, dict[str, Any]
]
"""A common chunk (text and thought parts, token counts, one candidate at most) as ``text_chunk`` read it, for the
parser and the request's continuation record, which read nothing in it again: the text event of each text part
that is no thought (in order), the candidate's parts as they came (the turn's end reads them for reasoning),
whether a part is a thought, ``usageMetadata``, ``finishReason``, ``responseId``, ``modelVersion``, and the decoded
chunk (a finish reason is checked on it for a block). A plain tuple: built and taken apart with no call."""

_text_delta = StreamEvent.text_delta
"""Bound once: the text event of nearly every chunk."""


def text_chunk(chunk: Any, make: Callable[[str, str | None, str | None], Any] = _text_delta) -> TextChunk | None:
    """The common chunk read in one walk, its text events built (``make`` of each text, the response id and the
    model): a ``TextChunk`` only where ``_CHUNK`` says plain too; ``None`` for any other, left to it. (Each "null
    or of a type" test is written out: this runs on every chunk.)"""
    if type(chunk) is not dict or not _CHUNK_KEYS.issuperset(chunk):
        return None
    get = chunk.get
    model, response_id = get("modelVersion"), get("responseId")
    if (model is not None and type(model) is not str) or (response_id is not None and type(response_id) is not str):
        return None
    usage = get("usageMetadata")
    if usage is not None:
        if type(usage) is dict and _COUNT_KEYS.issuperset(usage):  # counts only: the usage of nearly every chunk
            for count in usage.values():
                if count is not None and type(count) is not int:
                    return None
        elif not _usage(usage):
            return None
    events: list[StreamEvent] = []
    candidates = get("candidates")
    if type(candidates) is not list or len(candidates) != 1:  # several candidates: the full check's
        if candidates is None or candidates == []:
            return (events, None, False, usage, None, response_id, model, chunk)
        return None
    candidate = candidates[0]
    if type(candidate) is not dict or not _CANDIDATE_KEYS.issuperset(candidate):
        return None
    get = candidate.get
    reason, index, message = get("finishReason"), get("index"), get("finishMessage")
    if (
        (reason is not None and (type(reason) is not str or reason not in _REASONS))
        or (index is not None and type(index) is not int)
        or (message is not None and type(message) is not str)
    ):
        return None
    content = get("content")
    parts = None
    carried = False
    if content is not None:
        if type(content) is not dict or not _CONTENT_KEYS.issuperset(content):
            return None
        role, parts = content.get("role"), content.get("parts")
        if role is not None and type(role) is not str:
            return None
        if parts is not None:
            if type(parts) is not list:
                return None
            for part in parts:
                if type(part) is dict and len(part) == 1 and type(text := part.get("text")) is str:  # nearly every one
                    if text:
                        events.append(make(text, response_id, model))
                    continue
                if type(part) is not dict or not _TEXT_KEYS.issuperset(part):
                    return None
                text, thought = part.get("text"), part.get("thought")
                if (text is not None and type(text) is not str) or (thought is not None and type(thought) is not bool):
                    return None
                if thought:
                    carried = True
                elif text:
                    events.append(make(text, response_id, model))
    return (events, parts, carried, usage, reason, response_id, model, chunk)


def _usage(usage: Any) -> bool:
    if type(usage) is not dict:
        return False
    for key, value in usage.items():
        if key in _COUNT_KEYS:
            if value is not None and type(value) is not int:
                return False
        elif key not in _DETAIL_KEYS or not (value is None or (type(value) is list and all(map(_detail, value)))):
            return False
    return True


def _detail(detail: Any) -> bool:
    if type(detail) is not dict or not _MODALITY_KEYS.issuperset(detail):
        return False
    modality, count = detail.get("modality"), detail.get("tokenCount")
    return (count is None or type(count) is int) and (
        modality is None or (type(modality) is str and modality in _MODALITIES)
    )


def is_plain(chunk: Any) -> bool:
    """Whether the parser may read ``chunk`` (decoded JSON) as it is: what it reads is what the SDK's model
    would hold."""
    return text_chunk(chunk, _as_is) is not None or _CHUNK(chunk)


def _as_is(text: str, response_id: str | None, model: str | None) -> str:
    """A text as it is: ``is_plain`` asks only whether the walk takes a chunk (no event is built for nothing)."""
    return text


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
