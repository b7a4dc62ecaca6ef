"""The parser's reading of a chunk the lean stream hands on as plain data (``chunks.is_plain`` vouched for it).

The same readings as ``llmplex_gemini.response`` makes of the SDK's models, on the wire's field names; such a
chunk has no prompt feedback and no safety ratings (those chunks come as the SDK's models). ``parse_response`` is
``response.parse_response`` of a whole answer the lean ``generateContent`` hands on as plain data.
"""

from __future__ import annotations

import json
from typing import Any

from llmplex.errors import LLMRefusalError
from llmplex.types import FinishReason, Request, Response, StreamEvent, ToolCall, Usage
from llmplex_gemini.response import REFUSED, Candidate, call_id, finish_reason
from llmplex_gemini.thoughts import reasoning_of

__all__ = ["check_blocked", "parse_response", "read_candidate", "usage_event", "usage_from"]


def check_blocked(chunk: dict[str, Any], model: str | None) -> None:
    """Raise ``LLMRefusalError`` when the first candidate was withheld by policy."""
    candidates = chunk.get("candidates")
    candidate = candidates[0] if candidates else None
    reason = candidate.get("finishReason") if candidate is not None else None
    if reason in REFUSED:
        detail = candidate.get("finishMessage") or "no category given"  # type: ignore[union-attr]
        raise LLMRefusalError(f"Gemini withheld the answer ({reason}): {detail}", refusal=detail, model=model)


_TOTALS = frozenset({"promptTokenCount", "candidatesTokenCount", "totalTokenCount"})


def _audio(details: Any) -> int:
    return sum(d.get("tokenCount") or 0 for d in details or () if d.get("modality") == "AUDIO")


def usage_from(metadata: dict[str, Any]) -> Usage:
    """``response.usage_from`` of a ``usageMetadata`` object: ``Usage.of`` the counts that are not 0 (the rest are
    its defaults), the same usage as ``Usage(**...)`` without pydantic's validation of counts already checked."""
    totals = _totals(metadata)
    if totals is not None:
        return Usage.totals(*totals)
    get = metadata.get
    thoughts = get("thoughtsTokenCount") or 0
    tool_prompt = get("toolUsePromptTokenCount") or 0
    details = get("promptTokensDetails")
    audio_in = _audio(details) if details else 0
    cached = get("cachedContentTokenCount") or 0
    details = get("cacheTokensDetails")
    details_out = get("candidatesTokensDetails")
    inputs = (get("promptTokenCount") or 0) + tool_prompt
    outputs = (get("candidatesTokenCount") or 0) + thoughts
    counts: dict[str, Any] = {"input_tokens": inputs} if inputs != 0 else {}
    if outputs != 0:
        counts["output_tokens"] = outputs
    total = get("totalTokenCount") or 0
    if total != 0:
        counts["total_tokens"] = total
    if cached != 0 or thoughts != 0 or tool_prompt != 0 or audio_in != 0 or details or details_out:
        rest = {
            "cached_tokens": cached,
            "reasoning_tokens": thoughts,
            "tool_prompt_tokens": tool_prompt,
            "input_audio_tokens": audio_in,
            "cached_audio_tokens": min(_audio(details) if details else 0, audio_in, cached),
            "output_audio_tokens": _audio(details_out) if details_out else 0,
        }
        counts.update((name, count) for name, count in rest.items() if count != 0)
    return Usage.of(counts)


def usage_event(metadata: dict[str, Any], response_id: str | None, model: str | None) -> StreamEvent:
    """The usage event of a chunk's ``usageMetadata``: ``StreamEvent.usage_event(usage_from(metadata), ...)``,
    its usage checked once."""
    totals = _totals(metadata)
    if totals is not None:
        return StreamEvent.usage_totals(*totals, response_id, model)
    return StreamEvent.usage_event(usage_from(metadata), response_id, model)


def _totals(metadata: dict[str, Any]) -> tuple[int, int, Any] | None:
    """The prompt, candidates and total counts of nearly every chunk's ``usageMetadata`` (those three keys at most,
    the first two ``int``), for ``Usage.totals``; ``None`` for any other (read in full: its sums raise as they
    did)."""
    if not _TOTALS.issuperset(metadata):
        return None
    get = metadata.get
    prompt, candidates = get("promptTokenCount") or 0, get("candidatesTokenCount") or 0
    if type(prompt) is int and type(candidates) is int:
        return prompt, candidates, get("totalTokenCount") or 0
    return None


def read_candidate(candidate: dict[str, Any] | None) -> Candidate:
    """``response.read_candidate`` of a candidate object."""
    content = candidate.get("content") if candidate is not None else None
    parts = content.get("parts") if content is not None else None
    texts: list[str] = []
    calls: list[tuple[str | None, str, str]] = []
    for part in parts or ():
        call = part.get("functionCall")
        if call is not None:
            calls.append((call.get("id"), call.get("name") or "", json.dumps(call.get("args") or {})))
        elif part.get("text") and not part.get("thought"):
            texts.append(part["text"])
    return Candidate(tuple(texts), tuple(calls))


def parse_response(raw: dict[str, Any], request: Request) -> Response:
    """``response.parse_response`` of a plain answer."""
    model = raw.get("modelVersion") or request.model
    check_blocked(raw, model)
    candidates = raw.get("candidates")
    candidate = candidates[0] if candidates else None
    said = read_candidate(candidate)
    calls = tuple(
        ToolCall(id=call_id(cid, i), name=name, arguments=args) for i, (cid, name, args) in enumerate(said.calls)
    )
    reason: FinishReason = "other"
    if candidate is not None:
        reason = finish_reason(candidate.get("finishReason"), bool(calls))
    content = candidate.get("content") if candidate is not None else None
    reasoning = reasoning_of((content.get("parts") if content is not None else None) or ())
    metadata = raw.get("usageMetadata")
    return Response.of(  # unvalidated when every value has its field's type (validated otherwise)
        text="".join(said.texts),
        tool_calls=calls,
        finish_reason=reason,
        usage=Usage.unreported() if metadata is None else usage_from(metadata),
        model=model,
        response_id=raw.get("responseId"),
        reasoning=() if reasoning is None else (reasoning,),
        raw=raw,
    )
