"""A provider plugin's ``BaseException`` (``sys.exit()``, a ``BaseException`` subclass of its own) becomes an
``LLMError`` of that call, scrubbed and typed like any other failure.

Only two kinds pass untouched: ``KeyboardInterrupt`` (the user's Ctrl-C) and
``asyncio.CancelledError`` (the caller cancelled the task). A ``BaseExceptionGroup``
propagates as before (its secrets masked by the pipeline). Streams are contained
item by item, so a plugin exiting mid-stream is contained too, while closing
the stream (``GeneratorExit`` at its ``yield``) still works: wrapped here, or, for an
async stream held to no deadline, read by the pipeline's own loop (``Pipeline.astream``
contains each read of the plugin's stream and closes it with ``aclose_stream``).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import Any, TypeVar

from llmplex.errors import LLMError
from llmplex.masking.errors import scrub_error
from llmplex.plugins.host import describe_failure

__all__ = [
    "PASSING",
    "aclose_stream",
    "acontained",
    "aiter_contained",
    "contained",
    "iter_contained",
    "plugin_aborted",
]

T = TypeVar("T")

PASSING = (KeyboardInterrupt, asyncio.CancelledError, BaseExceptionGroup)
"""What passes through containment untouched: the user's Ctrl-C, cancellation, and groups (scrubbed above)."""


def plugin_aborted(error: BaseException, provider: str) -> LLMError:
    """The error of a call whose provider plugin raised ``error`` (a ``BaseException`` that is no Exception)."""
    scrub_error(error)
    return LLMError(
        f"provider plugin {provider!r} raised {describe_failure(error)} during the call; a plugin must raise an "
        "exception, never exit or abort the process: report it to the plugin's authors",
        provider=provider,
        cause=error,
        context={"aborted_with": type(error).__name__},
    )


def contained(fn: Callable[..., T], provider: str, /, *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, its ``BaseException`` turned into the call's ``LLMError`` (arguments given here,
    not bound in a closure, keep the per-call objects few)."""
    try:
        return fn(*args, **kwargs)
    except (Exception, *PASSING):
        raise
    except BaseException as exc:
        raise plugin_aborted(exc, provider) from exc


async def acontained(make: Callable[..., Awaitable[T]], provider: str, /, *args: Any, **kwargs: Any) -> T:
    """``await make(*args, **kwargs)``, its ``BaseException`` turned into the call's ``LLMError``."""
    try:
        return await make(*args, **kwargs)
    except (Exception, *PASSING):
        raise
    except BaseException as exc:
        raise plugin_aborted(exc, provider) from exc


def iter_contained(source: Iterable[T], provider: str) -> Iterator[T]:
    """The items of a plugin's stream; a ``BaseException`` raised while reading it becomes the ``LLMError``.
    Closing this closes ``source`` (the plugin's stream object) too."""
    items = iter(source)
    thrown = False  # what is thrown in at the ``yield`` (``close``'s ``GeneratorExit``) passes untouched
    try:
        for item in items:
            try:
                yield item
            except BaseException:
                thrown = True
                raise
    except (Exception, *PASSING):
        raise
    except BaseException as exc:
        if thrown:
            raise
        raise plugin_aborted(exc, provider) from exc
    finally:
        close = getattr(source, "close", None) or getattr(items, "close", None)
        if close is not None:
            close()


async def aiter_contained(source: AsyncIterable[T], provider: str) -> AsyncIterator[T]:
    """Async ``iter_contained``."""
    items = aiter(source)
    thrown = False
    try:
        async for item in items:
            try:
                yield item
            except BaseException:
                thrown = True
                raise
    except (Exception, *PASSING):
        raise
    except BaseException as exc:
        if thrown:
            raise
        raise plugin_aborted(exc, provider) from exc
    finally:
        await aclose_stream(source, items)


async def aclose_stream(source: object, items: object) -> None:
    """Close a plugin's async stream ``source`` read through ``items`` (``aiter(source)``): its ``aclose`` or
    ``close``, else the iterator's, awaited when that gives an awaitable."""
    close = (
        getattr(source, "aclose", None)
        or getattr(source, "close", None)
        or getattr(items, "aclose", None)
        or getattr(items, "close", None)
    )
    if close is not None:
        closing = close()
        if inspect.isawaitable(closing):
            await closing
