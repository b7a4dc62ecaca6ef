"""Send through the SDK's Azure client, which rewrites each request (the deployment's URL, a fresh token).

The openai plugin's lean path posts a request template built once per client,
so it would miss the deployment in the URL and the token's refresh: Azure goes
through the SDK's methods, keys they do not name travelling in ``extra_body``. The SDK splices the
deployment's name into the URL as it is, so it is percent-encoded first (``path_segment``): a ``#``, ``?``
or ``/`` in it never steers the request.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from openai import AsyncAzureOpenAI, AzureOpenAI

from llmplex.http import path_segment

__all__ = ["asend", "deployment", "send"]

_NOT_BODY = frozenset({"self", "extra_headers", "extra_query", "extra_body", "timeout"})


@functools.cache
def _params(method: Callable[..., Any]) -> frozenset[str]:
    return frozenset(inspect.signature(method).parameters) - _NOT_BODY


def deployment(name: str) -> str:
    """A deployment's name as it goes into ``/openai/deployments/{name}/...``: percent-encoded, or refused
    (``LLMConfigurationError``) when it holds ``..``, whitespace or a control character."""
    return path_segment(name, "Azure deployment name")


def _kwargs(method: Callable[..., Any], payload: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    params = _params(getattr(method, "__func__", method))
    kwargs = {k: v for k, v in payload.items() if k in params}
    extra = {k: v for k, v in payload.items() if k not in params}
    if extra:
        kwargs["extra_body"] = extra
    if timeout is not None:
        kwargs["timeout"] = timeout
    return kwargs


def send(client: AzureOpenAI, api: str, payload: dict[str, Any], timeout: float | None) -> Any:
    """``POST`` the payload to the deployment's Chat Completions or the v1 Responses API (a stream when
    ``payload["stream"]``); the SDK's exceptions propagate."""
    if api == "chat":  # the deployments API: the model names the deployment in the URL
        payload = {**payload, "model": deployment(payload["model"])}
    create: Callable[..., Any] = client.chat.completions.create if api == "chat" else client.responses.create
    return create(**_kwargs(create, payload, timeout))


async def asend(client: AsyncAzureOpenAI, api: str, payload: dict[str, Any], timeout: float | None) -> Any:
    """Async ``send``."""
    if api == "chat":
        payload = {**payload, "model": deployment(payload["model"])}
    create: Callable[..., Any] = client.chat.completions.create if api == "chat" else client.responses.create
    return await create(**_kwargs(create, payload, timeout))
