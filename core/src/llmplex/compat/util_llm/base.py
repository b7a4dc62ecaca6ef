"""util_llm's adapter result types (``src.utils.llm_adapters.base``), read by attribute as util_llm read the SDK."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["AdapterResponse", "ResponseDebugInfo", "ResponseUsage", "adapter_response"]

T = TypeVar("T")


@dataclass
class ResponseUsage:
    """Tokens one response consumed (``total_tokens`` as the API reported it: 0 unless given, as in util_llm)."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    total_tokens: int = 0


@dataclass
class ResponseDebugInfo:
    """What OpenAI said about one response: the model that answered, when, on which tier, the reasoning summary."""

    model: str | None = None
    created_at: int | None = None
    service_tier: str | None = None
    reasoning_summary: list[str] | None = None


@dataclass
class AdapterResponse(Generic[T]):
    """One answer: the stored response's id, the parsed ``schema`` instance, its usage and debug info."""

    response_id: str
    parsed: T
    usage: ResponseUsage
    debug: ResponseDebugInfo | None = None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _summary(output: Any) -> list[str] | None:
    """The texts of the first reasoning item's summary (util_llm read only the first)."""
    for item in output if isinstance(output, (list, tuple)) else ():
        if getattr(item, "type", None) == "reasoning":
            parts = getattr(item, "summary", None) or []
            texts = [getattr(p, "text", "") for p in parts if getattr(p, "type", None) == "summary_text"]
            return texts if parts else None
    return None


def adapter_response(response: Any) -> AdapterResponse[Any]:
    """An SDK ``responses.parse`` answer as util_llm's ``AdapterResponse`` (its parsed output as given)."""
    usage = getattr(response, "usage", None)
    in_details = getattr(usage, "input_tokens_details", None)
    out_details = getattr(usage, "output_tokens_details", None)
    tier = getattr(response, "service_tier", None)
    response_id = getattr(response, "id", "")
    return AdapterResponse(
        response_id=response_id if isinstance(response_id, str) else "",
        parsed=response.output_parsed,
        usage=ResponseUsage(
            input_tokens=_count(getattr(usage, "input_tokens", 0)),
            output_tokens=_count(getattr(usage, "output_tokens", 0)),
            reasoning_tokens=_count(getattr(out_details, "reasoning_tokens", 0)),
            cached_tokens=_count(getattr(in_details, "cached_tokens", 0)),
            total_tokens=_count(getattr(usage, "total_tokens", 0)),
        ),
        debug=ResponseDebugInfo(
            model=getattr(response, "model", None),
            created_at=getattr(response, "created_at", None),
            service_tier=tier if isinstance(tier, str) else None,
            reasoning_summary=_summary(getattr(response, "output", None)),
        ),
    )
