"""The tokens and cost of one answer or of a whole batch, as one line for standard error."""

from __future__ import annotations

from decimal import Decimal

from llmplex.types import Usage

__all__ = ["dollars", "usage_line"]


def dollars(cost: Decimal) -> str:
    """``$0.00021``: the exact figure, without exponent."""
    return f"${cost:f}"


def usage_line(usage: Usage, cost: Decimal | None, unpriced: int = 0) -> str:
    """``tokens: ... ; cost: $...``; ``unpriced`` answers had no known price (their cost is not counted)."""
    if not usage.reported and not usage.total_tokens:
        return "tokens: unknown (the provider reported no usage); cost: unknown"
    details = [f"{usage.cached_tokens} cached"] if usage.cached_tokens else []
    if usage.cache_write_tokens:
        details.append(f"{usage.cache_write_tokens} cache writes")
    inputs = f"{usage.input_tokens} input" + (f" ({', '.join(details)})" if details else "")
    outputs = f"{usage.output_tokens} output" + (
        f" ({usage.reasoning_tokens} reasoning)" if usage.reasoning_tokens else ""
    )
    if cost is None:
        priced = "unknown (no price for this model in genai-prices)"
    elif unpriced:
        priced = f"{dollars(cost)} ({unpriced} answer{'s' if unpriced != 1 else ''} without a known price not counted)"
    else:
        priced = dollars(cost)
    return f"tokens: {inputs}, {outputs}, {usage.total_tokens} total; cost: {priced}"
