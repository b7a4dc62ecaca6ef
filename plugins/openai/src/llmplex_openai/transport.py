"""Send a formatted payload: one function per API, sync and async.

A payload is the exact JSON body. A whole answer is posted through the SDK
client's own HTTP client and comes back as the decoded JSON ``dict``
(``llmplex_openai.lean``); a stream (the payload's own ``"stream"``) is read
from the same request as the decoded ``dict`` of each event. Clients the lean
path does not suit (``lean.suits``) go through the SDK, where keys the SDK
method does not name (from ``provider_options``) travel in its ``extra_body``
and a stream's events are the SDK's models (the parsers read either). The same
functions serve ``call`` and ``stream``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from openai import AsyncOpenAI, OpenAI
from openai.resources.chat.completions.completions import Completions
from openai.resources.responses.responses import Responses

from llmplex_openai.lean import apost, astream, post, stream, suits

__all__ = ["asend_chat", "asend_responses", "send_chat", "send_responses"]

_NOT_BODY = frozenset({"self", "extra_headers", "extra_query", "extra_body", "timeout"})
_CHAT, _RESPONSES = "/chat/completions", "/responses"


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
    """``POST /chat/completions``: the ``chat.completion`` JSON, or the stream of its chunks."""
    if suits(client):
        if payload.get("stream"):
            return stream(client, _CHAT, Completions.create, payload, timeout)
        return post(client, _CHAT, Completions.create, payload, timeout)
    return client.chat.completions.create(**_kwargs(payload, _body_params(Completions.create), timeout))


def asend_chat(client: AsyncOpenAI, payload: dict[str, Any], timeout: float | None) -> Awaitable[Any]:
    """Async ``send_chat``: what to await (no coroutine of its own: one frame fewer on every resumption of the
    call)."""
    if suits(client):
        if payload.get("stream"):
            return astream(client, _CHAT, Completions.create, payload, timeout)
        return apost(client, _CHAT, Completions.create, payload, timeout)
    return client.chat.completions.create(**_kwargs(payload, _body_params(Completions.create), timeout))


def send_responses(client: OpenAI, payload: dict[str, Any], timeout: float | None) -> Any:
    """``POST /responses``: the ``response`` JSON, or the stream of its events."""
    if suits(client):
        if payload.get("stream"):
            return stream(client, _RESPONSES, Responses.create, payload, timeout)
        return post(client, _RESPONSES, Responses.create, payload, timeout)
    return client.responses.create(**_kwargs(payload, _body_params(Responses.create), timeout))


def asend_responses(client: AsyncOpenAI, payload: dict[str, Any], timeout: float | None) -> Awaitable[Any]:
    """Async ``send_responses`` (what to await, as ``asend_chat``)."""
    if suits(client):
        if payload.get("stream"):
            return astream(client, _RESPONSES, Responses.create, payload, timeout)
        return apost(client, _RESPONSES, Responses.create, payload, timeout)
    return client.responses.create(**_kwargs(payload, _body_params(Responses.create), timeout))
