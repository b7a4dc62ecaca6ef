"""Embedding vectors of a list of texts, as ``client.embed`` returns them."""

from __future__ import annotations

import math
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field

from llmplex.types.usage import Usage

__all__ = ["Embeddings"]


class Embeddings(BaseModel):
    """One vector per input text, in the order given.

    A plugin returns one of these per batch it sent; core fills ``provider``,
    joins batches (usage summed) and sets ``attempts`` and ``latency``.
    """

    model_config = ConfigDict(frozen=True)

    vectors: list[list[float]] = Field(repr=False)
    usage: Usage = Usage()
    model: str = ""
    provider: str = ""
    attempts: int = 1
    latency: float = 0.0

    @property
    def dimensions(self) -> int:
        """The length of each vector (0 when there is none)."""
        return len(self.vectors[0]) if self.vectors else 0

    @property
    def cost_usd(self) -> Decimal | None:
        """What the call cost in US dollars (``usage.cost_usd``, from genai-prices); ``None`` when unknown."""
        return self.usage.cost_usd

    def norms(self) -> list[float]:
        """The Euclidean norm of each vector."""
        return [math.sqrt(sum(x * x for x in vector)) for vector in self.vectors]

    def __len__(self) -> int:
        return len(self.vectors)
