"""Token accounting reported by a provider, and what it cost."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, computed_field, model_validator

from llmplex.types.pricing import PriceKey, price_key, price_of

__all__ = ["Usage"]


class Usage(BaseModel):
    """Tokens one response consumed; ``total_tokens`` defaults to input + output.

    ``input_tokens`` counts every prompt token: the ``cached_tokens`` read from
    the provider's prompt cache and the ``cache_write_tokens`` written to it
    included. ``output_tokens`` counts ``reasoning_tokens`` too.
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    _priced_as: PriceKey | None = PrivateAttr(default=None)
    _batch: bool = PrivateAttr(default=False)
    _parts: tuple[Usage, ...] = PrivateAttr(default=())

    @model_validator(mode="after")
    def _fill_total(self) -> Usage:
        if not self.total_tokens and (self.input_tokens or self.output_tokens):
            object.__setattr__(self, "total_tokens", self.input_tokens + self.output_tokens)
        return self

    @computed_field(repr=False)  # type: ignore[prop-decorator]
    @property
    def cost_usd(self) -> Decimal | None:
        """What these tokens cost in US dollars, from ``genai-prices``; ``None`` when the price is unknown.

        Computed when first read (the price data loads then): a usage knows its
        price once core has seen which provider and model answered.
        """
        if self._parts:
            total = Decimal(0)
            for part in self._priced_parts():
                cost = part.cost_usd
                if cost is None:
                    return None
                total += cost
            return total
        if self._priced_as is None:
            return None
        return price_of(
            self._priced_as,
            self.input_tokens,
            self.cached_tokens,
            self.cache_write_tokens,
            self.output_tokens,
            self.reasoning_tokens,
            batch=self._batch,
        )

    def priced(self, plugin: str, model: str, *, batch: bool = False) -> Usage:
        """This usage, priced as ``model`` answered by the llmplex plugin ``plugin`` (itself when nothing changes).

        ``batch``: answered through the provider's Batch API, at its batch price.
        """
        key = price_key(plugin, model)
        private = self.__pydantic_private__ or {}  # read directly: attribute access to it costs microseconds
        if key == private.get("_priced_as") and not private.get("_parts") and batch == private.get("_batch"):
            return self  # unpriceable (the mock, a third-party plugin) as it was: no copy on the hot path
        usage = self.model_copy()
        usage._priced_as = key
        usage._batch = batch
        usage._parts = ()
        return usage

    def __eq__(self, other: Any) -> bool:
        """Usages are equal when their token counts are (what they are priced as is left out)."""
        if not isinstance(other, Usage):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(tuple(self.__dict__.values()))

    def _priced_parts(self) -> Iterator[Usage]:
        """The usages this sum was added from, each priced on its own (a depth-first walk, no recursion)."""
        stack = [self]
        while stack:
            usage = stack.pop()
            parts = (usage.__pydantic_private__ or {}).get("_parts")
            if parts:
                stack.extend(reversed(parts))
            else:
                yield usage

    def __add__(self, other: Usage) -> Usage:
        total = Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )
        # the two operands themselves, not their parts flattened: each sum is O(1), so summing N usages
        # is linear (cost_usd walks the tree once); an unpriced empty usage (sum()'s start) has no price to add
        total._parts = tuple(u for u in (self, other) if u._parts or u._priced_as is not None or u.total_tokens)
        return total
