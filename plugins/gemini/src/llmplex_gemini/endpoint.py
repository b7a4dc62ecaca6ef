"""Where and with which headers google-genai sends a model's ``generateContent``, per SDK client of ours.

The SDK's ``BaseApiClient._build_request`` joins the base URL, the API version and
the path, copies the client's headers (``x-goog-api-key``, ``user-agent``,
``x-goog-api-client``, ``Content-Type``) and adds ``X-Server-Timeout`` (whole
seconds, rounded up) when the call has a timeout. ``endpoint`` asks it once per
model for the URL (at most ``MAX_MODELS`` kept per client) and builds the headers
per call as it does; the lean calls hand both, with the body, to the SDK client's
own ``httpx2`` client exactly as ``_request_once``/``_async_request_once`` do.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from typing import Any

import httpx2
from google.genai import _transformers

from llmplex_gemini.clients import lean_capable

__all__ = ["MAX_MODELS", "Endpoint", "endpoint"]

MAX_MODELS = 64
"""URLs kept per client; past that the table starts again (a gateway may forward many model names)."""

_ENDPOINTS: weakref.WeakKeyDictionary[Any, Endpoint] = weakref.WeakKeyDictionary()


@dataclass
class Endpoint:
    """One SDK client's requests: its API client and ``httpx2`` client, its headers and default timeout."""

    api: Any
    http: httpx2.Client | httpx2.AsyncClient
    is_async: bool
    headers: dict[str, str] = field(repr=False)  # they hold the API key
    timeout: float | int | None
    """The client's ``HttpOptions.timeout`` (milliseconds)."""
    urls: dict[tuple[str, bool], str] = field(default_factory=dict)
    merged: dict[float | None, tuple[tuple[tuple[bytes, bytes], ...], dict[str, float | None]]] = field(
        default_factory=dict, repr=False
    )
    targets: dict[str, httpx2.URL] = field(default_factory=dict)

    def url(self, model: str, *, stream: bool) -> str | None:
        """The URL of ``model``'s ``generateContent`` (``streamGenerateContent?alt=sse``); ``None`` for a model name
        the SDK refuses (it then raises its own error)."""
        key = (model, stream)
        url = self.urls.get(key)
        if url is None:
            try:
                name = _transformers.t_model(self.api, model)
            except ValueError:
                return None
            path = f"{name}:streamGenerateContent?alt=sse" if stream else f"{name}:generateContent"
            built = self.api._build_request("post", path, {}, None).url
            if len(self.urls) >= MAX_MODELS:
                self.urls.clear()
            url = self.urls[key] = self.api._httpx_url(built, is_async=self.is_async)
        return url

    def request(self, url: str, body: bytes, timeout: int | None) -> httpx2.Request:
        """The request the SDK builds for ``body`` with a per-call ``timeout`` (milliseconds; ``None``: the
        client's): what ``build_request`` makes of it (the client's cookies, when it has some, merged by it)."""
        seconds = self._seconds(timeout)
        if self.http.cookies:
            headers = self._headers(seconds)
            return self.http.build_request(method="post", url=url, content=body, headers=headers, timeout=seconds)
        target = self.targets.get(url)
        if target is None:
            if len(self.targets) >= MAX_MODELS:
                self.targets.clear()
            target = self.targets[url] = httpx2.URL(url)
        merged, timeouts = self.sent(timeout)
        return httpx2.Request("POST", target, content=body, headers=merged, extensions={"timeout": timeouts})

    def sent(self, timeout: int | None) -> tuple[tuple[tuple[bytes, bytes], ...], dict[str, float | None]]:
        """The headers of ``request`` as its ``httpx2.Request`` holds them (merged with the client's, in its
        order) and its timeouts (``Timeout.as_dict()``, not to be changed), for ``llmplex.http.direct_sender``:
        worked out once per timeout, the same objects after (the direct sender tells a repeat by identity)."""
        seconds = self._seconds(timeout)
        kept = self.merged.get(seconds)
        if kept is None:
            headers = httpx2.Headers(self.http.headers)  # what ``build_request`` does with the SDK's headers
            headers.update(self._headers(seconds))
            if len(self.merged) >= MAX_MODELS:
                self.merged.clear()
            kept = self.merged[seconds] = (tuple(headers.raw), httpx2.Timeout(seconds).as_dict())
        return kept

    def _seconds(self, timeout: int | None) -> float | None:
        chosen = self.timeout if timeout is None else timeout
        return chosen / 1000.0 if chosen else None

    def _headers(self, seconds: float | None) -> dict[str, str]:
        headers = dict(self.headers)
        if seconds and "X-Server-Timeout" not in headers:
            headers["X-Server-Timeout"] = str(math.ceil(seconds))
        return headers


def endpoint(client: Any, *, is_async: bool) -> Endpoint | None:
    """The ``Endpoint`` of ``client`` when it is one of ours (``clients.lean_capable``); else ``None``."""
    if not lean_capable(client, is_async=is_async):
        return None
    found = _ENDPOINTS.get(client)
    if found is None:
        api = client._api_client
        options = api._http_options
        if options.headers is None or options.extra_body or (api.api_key or "").startswith("auth_tokens/"):
            return None
        http = api._async_httpx_client if is_async else api._httpx_client
        found = _ENDPOINTS[client] = Endpoint(api, http, is_async, dict(options.headers), options.timeout)
    return found
