"""The keyword arguments every call (complete, stream, ...) accepts, typed once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from llmplex.engine.request_builder import ToolInput
from llmplex.errors import LLMConfigurationError
from llmplex.reliability.budget import Budget, BudgetTracker
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.throttle import ThrottlePolicy

if TYPE_CHECKING:
    from llmplex.types.tool_context import ToolContext

__all__ = ["CallArgs", "check_cache_args"]


class CallArgs(TypedDict, total=False):
    """Keyword arguments of ``llmplex.Client.complete`` and its siblings.

    Attributes:
        system: a system prompt placed before the messages.
        tools: ``Tool`` objects, ``{"name", "description", "parameters"}`` dicts, or typed
            functions (made into tools by ``Tool.from_function``). When tools carry
            handlers, ``complete`` runs them and calls the model again until it answers.
        tool_choice: ``"auto"``, ``"none"``, ``"required"`` or one tool's name.
        timeout: seconds until the deadline (default: config ``timeout``).
        deadline: an absolute ``Deadline``.
        throttle: a retry policy for this call, or a mapping of the fields to change
            (``{"max_attempts": 1}`` turns retries off).
        budget: a ``Budget`` for this call alone, or a
            ``BudgetTracker`` shared with other calls; checked before every attempt.
        fallbacks: models to try in order once this model's retries are exhausted on a
            retryable error (``["anthropic:claude-sonnet-4-5"]``), or a table like the
            config's ``fallbacks``; replaces the config's for this call (``[]``: none).
        provider_options: passed through to the provider's payload untouched.
        previous_response_id: continue a stored response chain (where supported).
        output: a pydantic model, dataclass, TypedDict or JSON Schema dict; the answer's
            validated value is ``Response.output`` (``complete``/``acomplete`` only).
        output_retries: how many times to re-ask after an invalid structured answer (default 0).
        output_strategy: ``"native"``, ``"tool"`` or ``"prompt"`` (default: the best the provider declares).
        max_tool_rounds: how many rounds of tool calls to run before giving up (default 10).
        tool_context: the ``ToolContext`` handlers receive.
        cache: with a ``[cache]`` table, ``True`` caches this answer whatever its temperature,
            ``False`` neither reads nor writes the cache (default: cache at temperature 0).
        cache_key: caches this answer under this key too (implies ``cache=True``).
        temperature, max_tokens, top_p, presence_penalty, frequency_penalty, stop, seed:
            sampling options; only those given reach the wire.
    """

    system: str | None
    tools: Sequence[ToolInput] | None
    tool_choice: str | None
    timeout: float | None
    deadline: Deadline | None
    throttle: ThrottlePolicy | Mapping[str, Any] | None
    budget: Budget | BudgetTracker | Mapping[str, int | None] | None
    fallbacks: Sequence[str] | Mapping[str, Sequence[str]] | None
    provider_options: Mapping[str, Any] | None
    previous_response_id: str | None
    temperature: float | None
    max_tokens: int | None
    top_p: float | None
    presence_penalty: float | None
    frequency_penalty: float | None
    stop: Sequence[str] | None
    seed: int | None
    output: Any
    output_retries: int | None
    output_strategy: Literal["native", "tool", "prompt"] | None
    max_tool_rounds: int | None
    tool_context: ToolContext | None
    cache: bool | None
    cache_key: str | None


def check_cache_args(args: CallArgs, stream: bool, caches: bool) -> None:
    """Refuse ``cache=True`` / ``cache_key=`` that would do nothing: no response cache, or a stream."""
    if not args or (not args.get("cache") and args.get("cache_key") is None):
        return
    asked = "cache=True" if args.get("cache") else "cache_key=..."
    if stream:
        raise LLMConfigurationError(
            f"{asked} has no effect on a stream: streams are never cached. Call complete() to use the cache, "
            f"or drop {asked}"
        )
    if not caches:
        raise LLMConfigurationError(
            f"{asked} asks for the response cache, which is off for this client: turn it on with a [cache] table "
            '(e.g. [cache] backend = "memory" in llmplex.toml, or Client(cache={"backend": "memory"})) or pass a '
            f"llmplex.cache.ResponseCache in plugins=; or drop {asked}"
        )
