"""Token accounting reported by a provider."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["Usage"]


class Usage(BaseModel):
    """Tokens one response consumed; ``total_tokens`` defaults to input + output."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    @model_validator(mode="after")
    def _fill_total(self) -> Usage:
        if not self.total_tokens and (self.input_tokens or self.output_tokens):
            object.__setattr__(self, "total_tokens", self.input_tokens + self.output_tokens)
        return self

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )
