"""Send a formatted payload through the SDK: one function per API, sync and async.

A payload is the exact JSON body; keys the SDK method does not name (from
``provider_options``) travel in ``extra_body``. Whether the call streams is the
payload's own ``"stream"``, so the same functions serve ``call`` and ``stream``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from openai import AsyncOpenAI, OpenAI
from openai.resources.chat.completions.completions import Completions
from openai.resources.responses.responses import Responses

__all__ = ["asend_chat", "asend_responses", "send_chat", "send_responses"]

_NOT_BODY = frozenset({"self", "extra_headers", "extra_query", "extra_body", "timeout"})


@functools.cache
def _body_params(method: Callable[..., Any]) -> frozenset[str]:
    return frozenset(inspect.signature(method).parameters) - _NOT_BODY


def _kwargs(payload: dict[str, Any], params: frozenset[str], timeout: float | None) -> dict[str, Any]:
    if params.issuperset(payload):
        kwargs = dict(payload)
    else:
        kwargs = {k: v for k, v in payload.items() if k in params}
        kwargs["extra_body"] = {k: v for k, v in payload.items() if k not in params}
    if timeout is not None:
        kwargs["timeout"] = timeout
    return kwargs


def send_chat(client: OpenAI, payload: dict[str, Any], timeout: float | None) -> Any:
    """``POST /chat/completions``: a ``ChatCompletion``, or a stream of ``ChatCompletionChunk``."""
    return client.chat.completions.create(**_kwargs(payload, _body_params(Completions.create), timeout))


async def asend_chat(client: AsyncOpenAI, payload: dict[str, Any], timeout: float | None) -> Any:
    """Async ``send_chat``."""
    return await client.chat.completions.create(**_kwargs(payload, _body_params(Completions.create), timeout))


def send_responses(client: OpenAI, payload: dict[str, Any], timeout: float | None) -> Any:
    """``POST /responses``: a ``Response``, or a stream of ``ResponseStreamEvent``."""
    return client.responses.create(**_kwargs(payload, _body_params(Responses.create), timeout))


async def asend_responses(client: AsyncOpenAI, payload: dict[str, Any], timeout: float | None) -> Any:
    """Async ``send_responses``."""
    return await client.responses.create(**_kwargs(payload, _body_params(Responses.create), timeout))
