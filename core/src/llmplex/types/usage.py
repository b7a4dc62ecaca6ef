"""Token accounting reported by a provider, and what it cost."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any, Final

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    ValidationInfo,
    computed_field,
    field_validator,
    model_validator,
)

from llmplex.errors import LLMUsageError
from llmplex.types.pricing import Buckets, PriceKey, price_buckets, price_key
from llmplex.types.trusted import assembled

__all__ = ["MAX_TOKENS", "Usage"]

MAX_TOKENS: Final = 10**12
"""The most tokens one count may hold: a trillion is orders of magnitude past any model's context, so a
provider reporting more is reporting nonsense (a sum of usages, ``+``, is not held to it)."""

_COUNTS: Final = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "cache_write_1h_tokens",
    "input_audio_tokens",
    "cached_audio_tokens",
    "output_audio_tokens",
    "tool_prompt_tokens",
)
_PARTS: Final = (  # (part, what holds it): every token of a part is also counted in the holder
    ("cache_write_1h_tokens", "cache_write_tokens"),
    ("input_audio_tokens", "input_tokens"),
    ("tool_prompt_tokens", "input_tokens"),
    ("cached_audio_tokens", "cached_tokens"),
    ("cached_audio_tokens", "input_audio_tokens"),
    ("output_audio_tokens", "output_tokens"),
)
_UNREPORTED: Final = "the provider reported no usage, so nothing could be priced"
_UNPRICED: Final = (
    "no price: this usage was not priced as a model genai-prices knows (the mock provider, a third-party "
    "plugin, or a usage made by hand)"
)


def _contradiction(counts: dict[str, Any]) -> str | None:
    """What makes ``counts`` (a usage's fields, ``total_tokens`` filled in) contradict each other; ``None`` when
    they fit."""
    inputs, outputs, writes = counts["input_tokens"], counts["output_tokens"], counts["cache_write_tokens"]
    cached, audio_in = counts["cached_tokens"], counts["input_audio_tokens"]
    if (  # every rule at once, for the usage that keeps them all (each part of the loop below, written out)
        cached + writes <= inputs
        and counts["reasoning_tokens"] <= outputs
        and counts["cache_write_1h_tokens"] <= writes
        and audio_in <= inputs
        and counts["tool_prompt_tokens"] <= inputs
        and counts["cached_audio_tokens"] <= cached
        and counts["cached_audio_tokens"] <= audio_in
        and counts["output_audio_tokens"] <= outputs
        and counts["total_tokens"] == inputs + outputs
    ):
        return None
    if cached + writes > inputs:
        return (
            f"cached_tokens ({counts['cached_tokens']}) + cache_write_tokens ({counts['cache_write_tokens']}) exceed "
            f"input_tokens ({inputs}), which counts them"
        )
    if counts["reasoning_tokens"] > outputs:
        return f"reasoning_tokens ({counts['reasoning_tokens']}) exceed output_tokens ({outputs})"
    for part, whole in _PARTS:
        if counts[part] > counts[whole]:
            return f"{part} ({counts[part]}) exceed {whole} ({counts[whole]}), which counts them"
    if counts["total_tokens"] != inputs + outputs:
        return f"total_tokens ({counts['total_tokens']}) is not input_tokens ({inputs}) + output_tokens ({outputs})"
    return None


class Usage(BaseModel):
    """Tokens one response consumed, each counted once.

    ``input_tokens`` and ``output_tokens`` are the totals; ``total_tokens`` is
    their sum (filled in when not given). The parts are named inside them:
    ``cached_tokens`` (read from the provider's prompt cache) and
    ``cache_write_tokens`` (written to it) are part of ``input_tokens``,
    ``reasoning_tokens`` part of ``output_tokens``. Finer buckets a provider
    reports, each priced at its own rate: ``cache_write_1h_tokens`` (the part of
    the cache writes kept an hour, Anthropic's ``ephemeral_1h_input_tokens``),
    ``input_audio_tokens`` and ``output_audio_tokens`` (audio in and out),
    ``cached_audio_tokens`` (the audio among the cache reads) and
    ``tool_prompt_tokens`` (Gemini's tool-use prompts, part of the input).
    Every count is a whole number
    from 0 to ``MAX_TOKENS``, no part exceeds its total, and a count that breaks
    these rules raises ``LLMUsageError``.

    ``reported`` is ``False`` when the provider said nothing about usage: the
    counts are then unknown (not 0), ``cost_usd`` is ``None`` and budgets count
    what they reserved for the request instead.
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cache_write_1h_tokens: int = 0
    input_audio_tokens: int = 0
    cached_audio_tokens: int = 0
    output_audio_tokens: int = 0
    tool_prompt_tokens: int = 0
    reported: bool = True
    _priced_as: PriceKey | None = PrivateAttr(default=None)
    _batch: bool = PrivateAttr(default=False)
    _parts: tuple[Usage, ...] = PrivateAttr(default=())

    @field_validator(*_COUNTS, mode="before")
    @classmethod
    def _whole_count(cls, value: Any, info: ValidationInfo) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
            raise LLMUsageError(
                f"usage {info.field_name} must be a whole number of tokens from 0 to {MAX_TOKENS}, got {value!r}: "
                "the provider's answer reports impossible usage, so it was not used (it can be sent again)"
            )
        return value

    @model_validator(mode="after")
    def _parts_fit(self) -> Usage:
        if not self.total_tokens and (self.input_tokens or self.output_tokens):
            object.__setattr__(self, "total_tokens", self.input_tokens + self.output_tokens)
        problem = _contradiction(self.__dict__)
        if problem is not None:
            raise LLMUsageError(
                f"contradictory usage: {problem}; the provider's answer was not used (it can be sent again)"
            )
        return self

    @classmethod
    def of(cls, counts: dict[str, Any]) -> Usage:
        """``Usage(**counts)``, built without pydantic's validation when every value is an ``int`` count (not a
        ``bool``) from 0 to ``MAX_TOKENS`` and the counts fit together; validated as usual otherwise (raising
        what ``Usage(**counts)`` raises). Equal to the validated usage in every way (fields, fields set, ``==``,
        hash, dump, price)."""
        values = {**_FRESH, **counts}  # one merge (of any mapping): every field, in order, when counts names no other
        if len(values) != len(_FRESH) or "reported" in counts:
            return cls(**counts)
        for value in counts.values():
            if type(value) is not int or not 0 <= value <= MAX_TOKENS:
                return cls(**counts)
        if not values["total_tokens"]:
            values["total_tokens"] = values["input_tokens"] + values["output_tokens"]
        if _contradiction(values) is not None:
            return cls(**counts)
        usage = assembled(cls, values, set(counts), {"_priced_as": None, "_batch": False, "_parts": ()})
        return usage

    @classmethod
    def totals(cls, input_tokens: Any, output_tokens: Any, total_tokens: Any) -> Usage:
        """``Usage.of`` the counts among these three that are not 0: the usage a streamed chunk most often
        reports (no parts), built with no dict of counts to check one by one. Equal to ``Usage.of``'s in every
        way; any other value (not an ``int`` count, a total that is not the sum) goes through ``Usage.of``."""
        if (
            type(input_tokens) is int
            and type(output_tokens) is int
            and type(total_tokens) is int
            and 0 <= input_tokens <= MAX_TOKENS
            and 0 <= output_tokens <= MAX_TOKENS
            and (total_tokens == 0 or total_tokens == input_tokens + output_tokens <= MAX_TOKENS)
            and cls is Usage
        ):
            values = _FRESH.copy()
            fields_set = set()
            if input_tokens:
                values["input_tokens"] = input_tokens
                fields_set.add("input_tokens")
            if output_tokens:
                values["output_tokens"] = output_tokens
                fields_set.add("output_tokens")
            if total_tokens:
                fields_set.add("total_tokens")
            values["total_tokens"] = input_tokens + output_tokens
            return assembled(cls, values, fields_set, {"_priced_as": None, "_batch": False, "_parts": ()})
        counts = {"input_tokens": input_tokens, "output_tokens": output_tokens, "total_tokens": total_tokens}
        return cls.of({name: count for name, count in counts.items() if count != 0})

    @classmethod
    def unreported(cls) -> Usage:
        """The usage of an answer that reported none: unknown, not zero (``Usage(reported=False)``, built without
        validation: every stream starts with one)."""
        if cls is not Usage:
            return cls(reported=False)
        usage = assembled(cls, _UNKNOWN.copy(), {"reported"}, {"_priced_as": None, "_batch": False, "_parts": ()})
        return usage

    @computed_field(repr=False)  # type: ignore[prop-decorator]
    @property
    def cost_usd(self) -> Decimal | None:
        """What these tokens cost in US dollars, from ``genai-prices``; ``None`` when unknown (``cost_note`` says why).

        Each token is priced once, at its bucket's own rate: cache reads, 5-minute
        and 1-hour cache writes, audio in and out at theirs, the rest of the input
        at the input rate, reasoning (as providers bill it) at the output rate and
        tool-use prompts at the input rate. A bucket with tokens and no known price
        of its own leaves the cost unknown, and ``cost_note`` names it.
        Computed when first read (the price data loads then): a usage knows its
        price once core has seen which provider and model answered.
        """
        return self._cost()[0]

    @computed_field(repr=False)  # type: ignore[prop-decorator]
    @property
    def cost_note(self) -> str | None:
        """Why ``cost_usd`` is ``None`` (``None`` when the cost is known)."""
        return self._cost()[1]

    def _cost(self) -> tuple[Decimal | None, str | None]:
        if self._parts:
            total = Decimal(0)
            for part in self._priced_parts():
                cost, note = part._cost()
                if cost is None:
                    return None, note
                total += cost
            return total, None
        if not self.reported:
            return None, _UNREPORTED
        if self._priced_as is None:
            return None, _UNPRICED
        buckets = Buckets(**{name: getattr(self, name) for name in Buckets._fields})
        return price_buckets(self._priced_as, buckets, batch=self._batch)

    def priced(self, plugin: str, model: str, *, batch: bool = False) -> Usage:
        """This usage, priced as ``model`` answered by the llmplex plugin ``plugin`` (itself when nothing changes).

        ``batch``: answered through the provider's Batch API, at its batch price.
        """
        key = price_key(plugin, model)
        private = self.__pydantic_private__ or {}  # read directly: attribute access to it costs microseconds
        if key == private.get("_priced_as") and not private.get("_parts") and batch == private.get("_batch"):
            return self  # unpriceable (the mock, a third-party plugin) as it was: no copy on the hot path
        if self.__pydantic_extra__ is not None:
            usage = self.model_copy()  # its private attributes are a fresh dict: set them there, not one by one
            usage.__pydantic_private__.update(_priced_as=key, _batch=batch, _parts=())  # type: ignore[union-attr]
            return usage
        # model_copy's shallow copy, without its general machinery (a copy on every priced call)
        private = {**private, "_priced_as": key, "_batch": batch, "_parts": ()}
        return assembled(type(self), self.__dict__.copy(), set(self.__pydantic_fields_set__), private)

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
        # two valid usages add up to a valid one: built without validation (a running sum may pass MAX_TOKENS)
        total = Usage.model_construct(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cache_write_1h_tokens=self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            input_audio_tokens=self.input_audio_tokens + other.input_audio_tokens,
            cached_audio_tokens=self.cached_audio_tokens + other.cached_audio_tokens,
            output_audio_tokens=self.output_audio_tokens + other.output_audio_tokens,
            tool_prompt_tokens=self.tool_prompt_tokens + other.tool_prompt_tokens,
            reported=self.reported and other.reported,
        )
        # the two operands themselves, not their parts flattened: each sum is O(1), so summing N usages
        # is linear (cost_usd walks the tree once); an unpriced empty usage (sum()'s start) has no price to add
        total._parts = tuple(
            u for u in (self, other) if u._parts or u._priced_as is not None or u.total_tokens or not u.reported
        )
        return total


def settled(usage: Usage) -> bool:
    """Whether validating ``usage`` again (as a model field of its type does: ``Usage``'s after-validator runs on
    the instance) leaves it as it is and raises nothing: so for every usage built by validation or by
    ``Usage.of``; not for one made with ``model_construct`` whose counts contradict each other or whose
    ``total_tokens`` is still to be filled in."""
    counts = usage.__dict__
    if not counts["total_tokens"] and (counts["input_tokens"] or counts["output_tokens"]):
        return False
    return _contradiction(counts) is None


_FRESH: Final[dict[str, Any]] = {name: field.default for name, field in Usage.model_fields.items()}
"""Every field of a usage, in the fields' order (as validation puts them), at its default."""
_UNKNOWN: Final[dict[str, Any]] = {**_FRESH, "reported": False}
