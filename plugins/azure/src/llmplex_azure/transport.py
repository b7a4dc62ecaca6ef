"""Send to an Azure OpenAI resource: a whole answer with a fixed key lean, the rest through the SDK's Azure client.

The deployment's name is percent-encoded first (``path_segment``), as it goes into the URL as it is: a ``#``,
``?`` or ``/`` in it never steers the request. A whole answer (no ``stream``) from a client with a fixed
``api-key`` takes the openai plugin's lean path (``llmplex_openai.lean.post``): the SDK's own request, built
once per client and path by the SDK client itself (the deployment's URL as ``AzureOpenAI`` rewrites it, the
``api-version`` query, the ``api-key`` and ``X-Stainless-*`` headers), the body serialized as the SDK
serializes it, the answer decoded to a ``dict``, failures the SDK's own exceptions; async, it is posted straight on
the aiohttp session (``llmplex.http.direct_sender``; the client's ``strip_key_on_redirect`` runs on every redirect
httpx follows, each request carrying the origin its key was meant for). A client with an
Entra ID token (fetched per request) and every stream go through the SDK's methods, keys they do not name
travelling in ``extra_body``.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from llmplex_openai import lean
from openai import AsyncAzureOpenAI, AzureOpenAI
from openai.resources.chat.completions.completions import Completions
from openai.resources.responses.responses import Responses

from llmplex.http import direct_sender, path_segment
from llmplex_azure.clients import AUTH_ORIGIN, origin

__all__ = ["asend", "deployment", "send"]

_NOT_BODY = frozenset({"self", "extra_headers", "extra_query", "extra_body", "timeout"})
_RESPONSES: tuple[str, Callable[..., Any]] = ("/responses", Responses.create)
MAX_LEAN_PATHS = 64
"""The most paths (one per deployment) whose request template one client keeps for the lean path."""


@functools.cache
def _params(method: Callable[..., Any]) -> frozenset[str]:
    return frozenset(inspect.signature(method).parameters) - _NOT_BODY


@functools.lru_cache(maxsize=256)
def deployment(name: str) -> str:
    """A deployment's name as it goes into ``/openai/deployments/{name}/...``: percent-encoded, or refused
    (``LLMConfigurationError``, every time: only names that pass are kept) when it holds ``..``, whitespace or a
    control character."""
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


_Client = AzureOpenAI | AsyncAzureOpenAI
_keys: weakref.WeakKeyDictionary[_Client, dict[str, tuple[bytes, ...]]] = weakref.WeakKeyDictionary()
"""Per client and lean path, the ``api-key`` values its SDK request template carries (read once per template)."""
_bases: weakref.WeakKeyDictionary[_Client, tuple[object, bool]] = weakref.WeakKeyDictionary()
"""Per client, its base URL last seen and whether that URL names its deployment already."""


def _lean(client: _Client, path: str, method: Callable[..., Any]) -> bool:
    """Whether ``client`` sends a fixed key (no Entra ID token, which the SDK fetches per request) that the SDK's
    own request template carries (an older SDK adds ``api-key`` only per request: it goes through the SDK). The
    template of each path is kept: past ``MAX_LEAN_PATHS`` deployments, a new one goes through the SDK."""
    if client._azure_ad_token_provider is not None or client._azure_ad_token is not None or not lean.suits(client):
        return False
    per_path = _keys.get(client)
    if per_path is None:
        per_path = _keys.setdefault(client, {})
    keys = per_path.get(path)
    if keys is None:
        kept = lean._wires.get(client)
        if kept is not None and path not in kept and len(kept) >= MAX_LEAN_PATHS:
            return False
        headers = lean._wire(client, path, method).headers
        keys = per_path[path] = tuple(v for k, v in headers if k.lower() == b"api-key")
    return client.api_key.encode() in keys


def _chat_path(client: _Client, name: str) -> str:
    """The path the SDK posts a chat completion of deployment ``name`` to (``BaseAzureClient._build_request``),
    the base URL read once per URL the client holds."""
    base = client._base_url
    kept = _bases.get(client)
    if kept is None or kept[0] is not base:
        kept = _bases[client] = (base, "/deployments" in str(client.base_url.path))
    if kept[1]:  # a base URL naming its deployment already
        return "/chat/completions"
    return f"/deployments/{name}/chat/completions"


def send(client: AzureOpenAI, api: str, payload: dict[str, Any], timeout: float | None) -> Any:
    """``POST`` the payload to the deployment's Chat Completions or the v1 Responses API (a stream when
    ``payload["stream"]``); the SDK's exceptions propagate. A whole answer is the decoded JSON when the client
    suits the lean path, else the SDK's model."""
    if api == "chat":  # the deployments API: the model names the deployment in the URL
        payload = {**payload, "model": deployment(payload["model"])}
    if not payload.get("stream"):
        path, method = (_chat_path(client, payload["model"]), Completions.create) if api == "chat" else _RESPONSES
        if _lean(client, path, method):
            return lean.post(client, path, method, payload, timeout)
    create: Callable[..., Any] = client.chat.completions.create if api == "chat" else client.responses.create
    return create(**_kwargs(create, payload, timeout))


def asend(client: AsyncAzureOpenAI, api: str, payload: dict[str, Any], timeout: float | None) -> Awaitable[Any]:
    """Async ``send``: a whole answer lean as ``send``'s (``llmplex_openai.lean.apost``). What to await (no
    coroutine of its own: one frame fewer on every resumption of the call)."""
    if api == "chat":
        payload = {**payload, "model": deployment(payload["model"])}
    if not payload.get("stream"):
        path, method = (_chat_path(client, payload["model"]), Completions.create) if api == "chat" else _RESPONSES
        if _lean(client, path, method):
            return _apost(client, path, method, payload, timeout)
    create: Callable[..., Any] = client.chat.completions.create if api == "chat" else client.responses.create
    return create(**_kwargs(create, payload, timeout))  # type: ignore[no-any-return]


def _request(
    client: AsyncAzureOpenAI, path: str, method: Callable[..., Any], payload: dict[str, Any], timeout: float | None
) -> Any:
    """``lean._request`` naming the origin the client's key is meant for."""
    request = lean._request(client, path, method, payload, timeout)
    request.extensions.setdefault(AUTH_ORIGIN, origin(request.url))
    return request


async def _apost(
    client: AsyncAzureOpenAI, path: str, method: Callable[..., Any], payload: dict[str, Any], timeout: float | None
) -> Any:
    """``lean.apost`` with every request naming the origin its key is meant for (also one carrying the client's
    cookies), straight on the aiohttp session whenever ``direct_sender`` allows it."""
    http = client._client
    wire = lean._wire(client, path, method)
    request_built = functools.partial(_request, client, path, method, payload, timeout)  # no cells held in flight
    sender = direct_sender(http)
    if sender is None:
        request = request_built()
        with lean._sdk_errors(http, request):
            response = await http.send(request)
        return lean._decoded(client, response)
    timeouts = wire.timeouts(client.timeout if timeout is None else timeout)
    headers = wire.headers if timeout is None else wire.headers_for(timeout)
    try:
        answer = await sender.post(wire.address, headers, wire.body(payload), timeouts, request_built)
    except Exception as exc:  # what ``lean._sdk_errors`` does, without a generator's frame on every call
        error = lean._sdk_error(http, exc, request_built)
        if error is exc:
            raise
        raise error from exc
    return lean._decoded(client, answer)
