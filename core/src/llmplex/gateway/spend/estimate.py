"""What a request may cost before it is sent, and what a stream cost when it ended without its usage.

``worst_case_usd`` sizes a budget reservation: the prompt's tokens (estimated
as core's budgets estimate them: 4 characters a token, images and documents by
size) plus ``max_tokens``, or, when the request sets none, the model's output
limit (``OUTPUT_LIMITS`` for the families listed there, else its context
window from genai-prices less the prompt, else ``DEFAULT_OUTPUT_TOKENS``),
priced at the model's rates (or the ``[budget]`` ``unpriced_*`` rates).

``StreamProgress`` follows a stream as it is sent: the last usage the upstream
reported in an event and the characters of output streamed so far. A stream that ends
without the provider's final answer (the client left, the upstream cut it) is
charged with that usage, or, when none was reported, with the prompt's tokens
plus the output so far (estimated the same way), marked as an estimate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from llmplex.reliability.budget import Budget
from llmplex.reliability.estimate import CHARS_PER_TOKEN, estimate_input_tokens
from llmplex.types import Message, Request, StreamEvent, Usage
from llmplex.types.pricing import price_key, price_of

__all__ = [
    "DEFAULT_OUTPUT_TOKENS",
    "OUTPUT_LIMITS",
    "StreamProgress",
    "output_limit",
    "prompt_tokens",
    "worst_case_usd",
]

DEFAULT_OUTPUT_TOKENS = 32_768
"""The output reserved for a request without ``max_tokens`` to a model whose output limit is not known."""

OUTPUT_LIMITS: tuple[tuple[str, int], ...] = (
    ("gpt-4o", 16_384),
    ("gpt-4.1", 32_768),
    ("gpt-5", 128_000),
    ("o1", 100_000),
    ("o3", 100_000),
    ("o4", 100_000),
    ("claude-opus-4", 32_000),
    ("claude-sonnet-4", 64_000),
    ("claude-haiku-4", 64_000),
    ("claude-3-7-sonnet", 64_000),
    ("claude-3-5", 8_192),
    ("gemini-2.5", 65_536),
    ("gemini-2.0", 8_192),
)
"""Most output tokens one answer may have, by model-name prefix (the provider's documented limits)."""

_MESSAGE_TOKENS = 4
"""Tokens each message adds around its content (role, separators), as the chat formats count them."""


def prompt_tokens(messages: Sequence[Message], kwargs: Mapping[str, Any]) -> int:
    """The prompt's tokens, estimated: its characters (texts, tool calls, tool declarations) over
    ``CHARS_PER_TOKEN``, media parts by size, plus a few tokens per message."""
    request = Request.model_construct(model="", messages=tuple(messages), tools=(), output=None)
    tokens = estimate_input_tokens(request) + _MESSAGE_TOKENS * len(messages)
    tools = kwargs.get("tools") or ()
    chars = sum(len(str(tool.get("name", ""))) + len(str(tool.get("description", ""))) for tool in tools)
    chars += sum(len(repr(tool.get("parameters", ""))) for tool in tools)
    return tokens + math.ceil(chars / CHARS_PER_TOKEN)


def output_limit(plugin: str, model: str, prompt: int) -> int:
    """The most output tokens ``model`` may answer with (see the module's docstring)."""
    name = model.rpartition("/")[2]
    for prefix, limit in OUTPUT_LIMITS:
        if name.startswith(prefix):
            return limit
    window = _context_window(plugin, model)
    if window is not None and window > prompt:
        return window - prompt
    return DEFAULT_OUTPUT_TOKENS


def _context_window(plugin: str, model: str) -> int | None:
    key = price_key(plugin, model)
    if key is None:
        return None
    try:
        import genai_prices

        usage = genai_prices.Usage(input_tokens=1, output_tokens=1)
        found = genai_prices.calc_price(usage, key[1], provider_id=key[0]).model.context_window
    except Exception:  # an unknown model: no window known
        return None
    return found if isinstance(found, int) and found > 0 else None


def priced(plugin: str, model: str, input_tokens: int, output_tokens: int, unpriced: Budget | None) -> Decimal | None:
    """What ``input_tokens`` and ``output_tokens`` of ``model`` cost: its price, else the ``unpriced_*`` rates."""
    key = price_key(plugin, model)
    cost = None if key is None else price_of(key, input_tokens, 0, 0, output_tokens, 0)
    if cost is None and unpriced is not None:
        cost = unpriced.unpriced_cost(input_tokens, output_tokens)
    return cost


def worst_case_usd(
    plugin: str,
    model: str,
    messages: Sequence[Message],
    kwargs: Mapping[str, Any],
    unpriced: Budget | None = None,
) -> Decimal | None:
    """The most a request may cost: its prompt plus ``max_tokens`` (or the model's output limit)."""
    prompt = prompt_tokens(messages, kwargs)
    most = kwargs.get("max_tokens")
    if isinstance(most, int) and not isinstance(most, bool) and most > 0:
        output = most
    else:
        output = output_limit(plugin, model, prompt)
    return priced(plugin, model, prompt, output, unpriced)


@dataclass
class StreamProgress:
    """What a stream sent so far: ``events`` from upstream, the last ``reported`` usage, output ``chars``."""

    events: int = 0
    chars: int = 0
    reported: Usage | None = None

    def see(self, event: StreamEvent) -> None:
        """Count one event of the upstream stream."""
        self.events += 1
        if event.type == "usage" and event.usage is not None and event.usage.reported:
            self.reported = event.usage
        else:
            self.chars += len(event.text) + len(event.arguments_delta) + len(event.tool_name or "")

    def usage(
        self, messages: Sequence[Message], kwargs: Mapping[str, Any], so_far: Usage | None = None
    ) -> tuple[Usage, bool]:
        """The usage to charge for a stream that ended here, and whether it is an estimate; ``so_far`` is a usage
        reported after the last usage event, which no event handed on."""
        streamed = math.ceil(self.chars / CHARS_PER_TOKEN)
        reported = so_far if so_far is not None else self.reported
        if reported is not None and reported.input_tokens and reported.output_tokens >= streamed:
            return reported, False
        prompt = reported.input_tokens if reported is not None and reported.input_tokens else None
        if prompt is None:
            prompt = prompt_tokens(messages, kwargs)
        output = max(streamed, reported.output_tokens if reported is not None else 0)
        return Usage(input_tokens=prompt, output_tokens=output), True
