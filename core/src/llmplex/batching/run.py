"""``abatch``/``batch``: run many ``complete`` calls with bounded concurrency, results in order."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from llmplex import process_client
from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.types import Response

if TYPE_CHECKING:
    from llmplex.client import Client

__all__ = [
    "DEFAULT_CONCURRENCY",
    "BatchResult",
    "abatch",
    "batch",
    "checked_concurrency",
    "complete_item",
    "settle",
    "split_item",
]

T = TypeVar("T")
BatchResult = Response | LLMError
DEFAULT_CONCURRENCY = 32


async def settle(work: Awaitable[T]) -> T | LLMError:
    """The result of ``work``, or the LLMError it raised (any other exception becomes one)."""
    try:
        return await work
    except LLMError as exc:
        return exc
    except Exception as exc:  # every request ends as a value or an LLMError
        return LLMError(f"the request failed unexpectedly: {type(exc).__name__}: {exc}", cause=exc)


def checked_concurrency(concurrency: Any) -> int:
    """``concurrency`` when it is a whole number >= 1; raises LLMConfigurationError otherwise."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise LLMConfigurationError(f"concurrency must be a whole number >= 1, got {concurrency!r}")
    return concurrency


def split_item(item: Mapping[str, Any]) -> tuple[str | None, Any, dict[str, Any]]:
    """A batch item (``{"model", "prompt" or "messages", **complete kwargs}``) as model, prompt and keywords."""
    if not isinstance(item, Mapping):
        raise LLMConfigurationError(
            f"a batch request must be a dict of complete() arguments like "
            f"{{'model': ..., 'prompt': ...}}, got {type(item).__name__}"
        )
    kwargs = dict(item)
    model = kwargs.pop("model", None)
    if "prompt" in kwargs and "messages" in kwargs:
        raise LLMConfigurationError("a batch request has both 'prompt' and 'messages'; give one")
    prompt = kwargs.pop("prompt", kwargs.pop("messages", None))
    if prompt is None:
        raise LLMConfigurationError("a batch request needs a 'prompt' (a string) or 'messages' (a list)")
    return model, prompt, kwargs


async def complete_item(client: Client, item: Mapping[str, Any]) -> Response:
    """One batch item sent with ``client``."""
    model, prompt, kwargs = split_item(item)
    return await client.acomplete(model, prompt, **kwargs)


async def abatch(
    requests: Iterable[Mapping[str, Any]],
    concurrency: int = DEFAULT_CONCURRENCY,
    *,
    client: Client | None = None,
    on_result: Callable[[int, BatchResult], None] | None = None,
) -> list[BatchResult]:
    """Run every request; return a Response or an LLMError for each, in request order.

    Each request is a dict of [`complete()`][llmplex.complete] arguments:
    ``{"model": "openai:gpt-4o-mini", "prompt": "hi", "temperature": 0}``. At most
    ``concurrency`` requests are in flight at once. ``on_result(index, result)``
    is called as each one finishes (for progress or a journal).
    """
    checked_concurrency(concurrency)
    if client is None:
        client = process_client.shared()
    items = list(requests)
    results: list[BatchResult | None] = [None] * len(items)
    queue = iter(enumerate(items))

    async def worker() -> None:
        for index, item in queue:
            result = await settle(complete_item(client, item))
            results[index] = result
            if on_result is not None:
                on_result(index, result)

    async with asyncio.TaskGroup() as group:
        for _ in range(min(concurrency, len(items))):
            group.create_task(worker())
    return cast("list[BatchResult]", results)  # every worker filled its indexes


def batch(
    requests: Iterable[Mapping[str, Any]],
    concurrency: int = DEFAULT_CONCURRENCY,
    *,
    client: Client | None = None,
    on_result: Callable[[int, BatchResult], None] | None = None,
) -> list[BatchResult]:
    """[`abatch()`][llmplex.abatch] for sync code (code that is not already running an event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(abatch(requests, concurrency, client=client, on_result=on_result))
    raise LLMConfigurationError("batch() was called inside a running event loop; use 'await abatch(...)' there")
