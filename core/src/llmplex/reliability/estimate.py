"""How many tokens a request may use, before it is sent: what a budget reserves."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from llmplex.types import MediaPart, Request

__all__ = [
    "BYTES_PER_PART_TOKEN",
    "CHARS_PER_TOKEN",
    "IMAGE_TOKENS",
    "Estimate",
    "Estimator",
    "estimate_input_tokens",
    "estimate_request",
]

CHARS_PER_TOKEN = 4
"""The default prompt estimate: one token per 4 characters, rounded up (English text with common tokenizers)."""

IMAGE_TOKENS = 1600
"""What one image is counted as: about what a large image costs at OpenAI (high detail) and Anthropic."""

BYTES_PER_PART_TOKEN = 1000
"""A document or audio clip is counted as one token per 1000 bytes (a rough middle: a PDF page is
1,500-3,000 tokens, a second of audio 25-32); pass ``estimator=`` for a better one."""

Estimator = Callable[[Request], int]
"""Input tokens a request will use: ``BudgetTracker(estimator=...)`` replaces ``estimate_input_tokens``."""


@dataclass(frozen=True)
class Estimate:
    """Tokens reserved for one request; ``output_tokens`` is ``None`` when nothing bounds the answer.

    ``cost_usd`` is what those tokens cost at the model's price (reserved under a
    cost cap: the prompt's alone when the answer is unbounded; ``None`` when no
    cost cap is set).
    """

    input_tokens: int
    output_tokens: int | None
    cost_usd: Decimal | None = None

    @property
    def total_tokens(self) -> int | None:
        """Input plus output, or ``None`` when the output is unbounded."""
        return None if self.output_tokens is None else self.input_tokens + self.output_tokens


def estimate_input_tokens(request: Request) -> int:
    """The characters of everything the prompt sends — message texts, tool calls, tool and output
    schemas — divided by ``CHARS_PER_TOKEN``, rounded up, plus ``IMAGE_TOKENS`` per image
    and one token per ``BYTES_PER_PART_TOKEN`` bytes of a document or audio clip (by URL: as an image)."""
    chars = 0
    part_tokens = 0
    for message in request.messages:
        chars += sum(len(piece) for piece in message.pieces if isinstance(piece, str))
        for call in message.tool_calls:
            chars += len(call.name) + len(call.arguments)
        part_tokens += sum(_part_tokens(part) for part in message.parts)
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    if request.output is not None:
        chars += len(json.dumps(request.output.json_schema))
    return math.ceil(chars / CHARS_PER_TOKEN) + part_tokens


def _part_tokens(part: MediaPart) -> int:
    if part.kind == "image" or part.data is None:
        return IMAGE_TOKENS
    return math.ceil(len(part.data) / BYTES_PER_PART_TOKEN)


def estimate_request(request: Request, estimator: Estimator = estimate_input_tokens) -> Estimate:
    """The prompt's estimate and ``max_tokens`` (the most the answer may use, when set)."""
    return Estimate(max(0, int(estimator(request))), request.config.max_tokens)
