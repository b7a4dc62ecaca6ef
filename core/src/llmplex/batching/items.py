"""One batch item: its ``complete()`` arguments split, sent, and settled to a Response or an LLMError."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.types import Response

if TYPE_CHECKING:
    from llmplex.client import Client

__all__ = ["complete_item", "settle", "split_item"]

T = TypeVar("T")


async def settle(work: Awaitable[T]) -> T | LLMError:
    """The result of ``work``, or the LLMError it raised (any other exception becomes one)."""
    try:
        return await work
    except LLMError as exc:
        return exc
    except Exception as exc:  # every request ends as a value or an LLMError
        return LLMError(f"the request failed unexpectedly: {type(exc).__name__}: {exc}", cause=exc)


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
