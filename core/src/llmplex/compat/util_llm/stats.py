"""util_llm's per-call statistics: ``LLMClient.get_last_batch_stats()`` after a batch or a single response."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["BatchStats", "RequestResult"]


@dataclass
class RequestResult:
    """One request of the last call: its entity key, whether it succeeded, its usage, reasoning summary or error."""

    entity_key: str | None
    success: bool
    usage: Any = None
    reasoning_summary: list[str] | None = None
    error: str | None = None


@dataclass
class BatchStats:
    """Token and request totals of the last call (reset when the next one starts), with each request's result."""

    total_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    request_count: int = 0
    success_count: int = 0
    error_count: int = 0
    results: list[RequestResult] = field(default_factory=list)

    def record(self, entity_key: str | None, answer: Any = None, error: BaseException | None = None) -> None:
        """Count one request: its ``AdapterResponse`` when it succeeded, else its error."""
        self.request_count += 1
        if error is not None:
            self.error_count += 1
            self.results.append(RequestResult(entity_key=entity_key, success=False, error=str(error)))
            return
        usage = answer.usage
        self.success_count += 1
        self.total_tokens += usage.total_tokens
        self.reasoning_tokens += usage.reasoning_tokens
        self.cached_tokens += usage.cached_tokens
        debug = getattr(answer, "debug", None)
        summary = getattr(debug, "reasoning_summary", None)
        self.results.append(RequestResult(entity_key, True, usage, summary if isinstance(summary, list) else None))
