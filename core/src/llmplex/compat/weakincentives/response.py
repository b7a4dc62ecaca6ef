"""weakincentives' ``PromptResponse``: what ``evaluate`` returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["PromptResponse"]

OutputT = TypeVar("OutputT")


@dataclass(frozen=True)
class PromptResponse(Generic[OutputT]):
    """The result of ``evaluate``: ``text`` for a plain prompt, ``output`` (the dataclass) for structured output."""

    prompt_name: str
    text: str | None
    output: OutputT | None
