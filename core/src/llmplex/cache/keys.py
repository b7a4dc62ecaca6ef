"""Which requests the response cache may answer, and the stable key of one."""

from __future__ import annotations

import hashlib
import json

from llmplex.provider import ProviderSettings
from llmplex.types import Request, Response

__all__ = ["KEY_VERSION", "cacheable_request", "cacheable_response", "request_key"]

KEY_VERSION = 1
"""Part of every key: raise it when the key material changes, so old entries are never read."""


def cacheable_request(request: Request) -> bool:
    """Whether ``request`` may be answered from, and stored in, the cache.

    Never a stream; never with ``cache=False``; otherwise with ``cache=True``, a
    ``cache_key``, or a temperature of exactly 0 (a deterministic request).
    """
    if request.stream or request.cache is False:
        return False
    return request.cache is True or request.cache_key is not None or request.config.temperature == 0


def cacheable_response(response: Response) -> bool:
    """Whether ``response`` is a complete answer worth keeping (no refusal, not cut short)."""
    return response.finish_reason in ("stop", "tool_calls") and response.refusal is None and not response.cached


def request_key(request: Request, settings: ProviderSettings) -> str:
    """The sha256 of the normalised request and the provider instance it goes to.

    The material is canonical JSON (sorted keys): the settings class and its
    fields (secrets dump as ``**********``, so no key or token is ever part of
    it), the model, messages, tools, tool choice, sampling options, output
    schema, provider options, response chain and ``cache_key``. Only the digest
    is stored.
    """
    material = {
        "version": KEY_VERSION,
        "provider": f"{type(settings).__module__}.{type(settings).__qualname__}",
        "settings": settings.model_dump(mode="json"),
        "request": request.model_dump(mode="json", exclude={"stream", "cache"}),
    }
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), default=repr, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
