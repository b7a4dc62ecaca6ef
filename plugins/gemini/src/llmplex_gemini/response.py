"""An SDK ``GenerateContentResponse`` → core ``Response``; pieces shared with streaming."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from llmplex.errors import LLMRefusalError
from llmplex.types import FinishReason, ReasoningPart, Request, Response, ToolCall, Usage
from llmplex_gemini.thoughts import reasoning_of

__all__ = [
    "GENERATED_CALL_ID",
    "REFUSED",
    "Candidate",
    "call_id",
    "check_blocked",
    "finish_reason",
    "parse_response",
    "read_candidate",
    "usage_from",
]

REFUSED = frozenset(
    {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "MODEL_ARMOR"}
)
"""Finish reasons that mean the answer was withheld by policy: raised as ``LLMRefusalError``."""

_FINISH_REASONS: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "RECITATION": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error",
    "TOO_MANY_TOOL_CALLS": "error",
    "MISSING_THOUGHT_SIGNATURE": "error",
    "MALFORMED_RESPONSE": "error",
}


def _name(value: Any) -> str | None:
    """An SDK enum (or a plain string) as its wire name."""
    if value is None:
        return None
    return str(getattr(value, "value", value))


def finish_reason(reason: Any, has_tool_calls: bool) -> FinishReason:
    """Core's finish reason for a Gemini ``finishReason`` (a normal stop with calls is ``tool_calls``)."""
    mapped = _FINISH_REASONS.get(_name(reason) or "STOP", "other")
    return "tool_calls" if mapped == "stop" and has_tool_calls else mapped


def _blocked_categories(ratings: Any) -> str:
    blocked = [_name(r.category) for r in ratings or () if getattr(r, "blocked", False)]
    return ", ".join(c for c in blocked if c) or "no category given"


def check_blocked(raw: Any, model: str | None) -> None:
    """Raise ``LLMRefusalError`` when the prompt or the first candidate was blocked by policy."""
    feedback = raw.prompt_feedback
    if feedback is not None and feedback.block_reason is not None:
        reason = _name(feedback.block_reason)
        detail = feedback.block_reason_message or _blocked_categories(feedback.safety_ratings)
        raise LLMRefusalError(f"Gemini blocked the prompt ({reason}): {detail}", refusal=detail, model=model)
    candidate = raw.candidates[0] if raw.candidates else None
    reason = _name(candidate.finish_reason) if candidate is not None else None
    if candidate is not None and reason in REFUSED:
        detail = candidate.finish_message or _blocked_categories(candidate.safety_ratings)
        raise LLMRefusalError(f"Gemini withheld the answer ({reason}): {detail}", refusal=detail, model=model)


def _audio(details: Any) -> int:
    """The audio tokens of a per-modality breakdown (``prompt_tokens_details``, ``cache_tokens_details``...)."""
    return sum(d.token_count or 0 for d in details or () if _name(d.modality) == "AUDIO")


def usage_from(metadata: Any) -> Usage:
    """Core usage: tool-use prompt tokens count as input (and as tool-use prompts), thoughts as output (and as
    reasoning), audio in and out and cached audio apart (each has its own price); none reported is unknown
    usage."""
    if metadata is None:
        return Usage.unreported()
    thoughts = metadata.thoughts_token_count or 0
    tool_prompt = metadata.tool_use_prompt_token_count or 0
    audio_in = _audio(metadata.prompt_tokens_details)
    cached = metadata.cached_content_token_count or 0
    return Usage.of(  # Usage(**counts), unvalidated when the counts are plain ints that fit (else validated)
        {
            "input_tokens": (metadata.prompt_token_count or 0) + tool_prompt,
            "output_tokens": (metadata.candidates_token_count or 0) + thoughts,
            "total_tokens": metadata.total_token_count or 0,
            "cached_tokens": cached,
            "reasoning_tokens": thoughts,
            "tool_prompt_tokens": tool_prompt,
            "input_audio_tokens": audio_in,
            "cached_audio_tokens": min(_audio(metadata.cache_tokens_details), audio_in, cached),
            "output_audio_tokens": _audio(metadata.candidates_tokens_details),
        }
    )


@dataclass(frozen=True)
class Candidate:
    """The visible text and the function calls of one candidate (thought parts left out)."""

    texts: tuple[str, ...]
    calls: tuple[tuple[str | None, str, str], ...]
    """``(id or None, name, arguments JSON)`` per function call."""


def read_candidate(candidate: Any) -> Candidate:
    """What a candidate says."""
    parts = candidate.content.parts if candidate is not None and candidate.content is not None else None
    texts: list[str] = []
    calls: list[tuple[str | None, str, str]] = []
    for part in parts or ():
        if part.function_call is not None:
            call = part.function_call
            calls.append((call.id, call.name or "", json.dumps(call.args or {})))
        elif part.text and not part.thought:
            texts.append(part.text)
    return Candidate(tuple(texts), tuple(calls))


GENERATED_CALL_ID = "gemini-call-"
"""The prefix of the ids given to calls Gemini sent without one (they are not sent back)."""


def call_id(given: str | None, index: int) -> str:
    """Gemini's own call id when it sends one, else a stable one by position."""
    return given or f"{GENERATED_CALL_ID}{index}"


def _reasoning(candidate: Any) -> tuple[ReasoningPart, ...]:
    parts = candidate.content.parts if candidate is not None and candidate.content is not None else None
    found = reasoning_of(parts or ())
    return () if found is None else (found,)


def parse_response(raw: Any, request: Request) -> Response:
    """The core response for one ``GenerateContentResponse``."""
    check_blocked(raw, raw.model_version or request.model)
    candidate = raw.candidates[0] if raw.candidates else None
    said = read_candidate(candidate)
    calls = tuple(
        ToolCall(id=call_id(cid, i), name=name, arguments=args) for i, (cid, name, args) in enumerate(said.calls)
    )
    reason: FinishReason = "other"
    if candidate is not None:
        reason = finish_reason(candidate.finish_reason, bool(calls))
    return Response(
        text="".join(said.texts),
        tool_calls=calls,
        finish_reason=reason,
        usage=usage_from(raw.usage_metadata),
        model=raw.model_version or request.model,
        response_id=raw.response_id,
        reasoning=_reasoning(candidate),
        raw=raw,
    )
