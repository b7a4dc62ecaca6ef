"""The response cache as a pipeline plugin: answers a cacheable call before it is sent, keeps complete answers."""

from __future__ import annotations

import json
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmplex.cache.held import hold
from llmplex.cache.keys import cacheable_request, cacheable_response, request_key
from llmplex.cache.stores import DiskStore, MemoryStore, Store
from llmplex.hookspecs import hookimpl
from llmplex.provider import ProviderSettings
from llmplex.types import Request, Response

if TYPE_CHECKING:
    from collections.abc import Generator

    from llmplex.config.schema import CacheConfig

__all__ = ["ENTRY_FORMAT", "CacheWarning", "CachedAnswer", "ResponseCache"]

ENTRY_FORMAT = "llmplex.response-cache/1"
"""The ``format`` of every entry llmplex writes (JSON data only); an entry without it is foreign: a miss."""


class CacheWarning(UserWarning):
    """The response cache could not read or write an entry; the call went to the provider instead."""


@dataclass(frozen=True)
class CachedAnswer:
    """What ``llmplex_call`` returns on a hit instead of a provider response; ``llmplex_parse`` unwraps it."""

    response: Response


class ResponseCache:
    """A non-provider plugin wrapping ``llmplex_call``/``llmplex_acall``/``llmplex_parse`` of every provider.

    A cacheable request (see ``cacheable_request``) found
    in ``store`` is answered without sending anything: the Response has
    ``cached=True`` and ``attempts=0``. A complete answer to a cacheable request
    is stored for ``ttl`` seconds (``None``: until evicted). ``now`` reads wall
    time (injectable for tests). A store that fails, or an entry that does not
    read back, is a ``CacheWarning`` and a miss, never an error.

    Entries are JSON data, read back by validation alone (no pickle: nothing in
    a cache file runs). An error, a refusal, an answer cut short, and an answer
    whose structured output fails validation (see ``llmplex.cache.held``) are
    never stored, and an entry holding one is never served.
    """

    def __init__(self, store: Store, ttl: float | None = None, now: Callable[[], float] = time.time) -> None:
        self.store = store
        self.ttl = ttl
        self.now = now

    @classmethod
    def from_config(cls, config: CacheConfig) -> ResponseCache:
        """The cache a ``[cache]`` table describes."""
        if config.backend == "memory":
            return cls(MemoryStore(), config.ttl)
        directory = None if config.directory is None else Path(config.directory).expanduser()
        return cls(DiskStore(directory), config.ttl)

    # -- entries -----------------------------------------------------------------

    def lookup(self, request: Request, settings: ProviderSettings) -> Response | None:
        """The fresh cached answer to ``request``, or ``None``."""
        key = request_key(request, settings)
        try:
            text = self.store.get(key)
        except Exception as exc:
            _warn("could not be read", exc)
            return None
        if text is None:
            return None
        try:
            response, expires = _read_entry(text)
        except Exception as exc:
            _warn("holds a corrupted entry, or one llmplex did not write", exc)
            self._forget(key)
            return None
        if expires is not None and self.now() >= expires:
            self._forget(key)
            return None
        return response.model_copy(update={"cached": True})

    def keep(self, request: Request, settings: ProviderSettings, response: Response) -> None:
        """Store ``response`` as the answer to ``request`` (a failure is a warning)."""
        try:
            entry = {
                "format": ENTRY_FORMAT,
                "expires": None if self.ttl is None else self.now() + self.ttl,
                "response": response.model_dump(mode="json"),
            }
            self.store.set(request_key(request, settings), json.dumps(entry), self.ttl)
        except Exception as exc:
            _warn("could not be written", exc)

    def _forget(self, key: str) -> None:
        try:
            self.store.delete(key)
        except Exception as exc:
            _warn("could not drop an entry", exc)

    # -- hooks -------------------------------------------------------------------

    @hookimpl(tryfirst=True)
    def llmplex_call(self, request: Request | None, settings: ProviderSettings) -> CachedAnswer | None:
        """A hit instead of sending; ``None`` lets the provider send."""
        if request is None or not cacheable_request(request):
            return None
        hit = self.lookup(request, settings)
        return None if hit is None else CachedAnswer(hit)

    @hookimpl(tryfirst=True)
    def llmplex_acall(self, request: Request | None, settings: ProviderSettings) -> Any:
        """Async twin of ``llmplex_call``: an awaitable of the hit, or ``None``."""
        hit = self.llmplex_call(request, settings)
        return None if hit is None else _resolved(hit)

    @hookimpl(tryfirst=True, specname="llmplex_parse")
    def unwrap(self, raw: Any) -> Response | None:
        """A hit's response as it was stored; anything else is the provider's to parse."""
        return raw.response if isinstance(raw, CachedAnswer) else None

    @hookimpl(wrapper=True, specname="llmplex_parse")
    def store_parsed(
        self, raw: Any, request: Request, settings: ProviderSettings
    ) -> Generator[None, Response, Response]:
        """Keep a complete answer to a cacheable request; errors raised by the parser pass through untouched."""
        response = yield
        if isinstance(raw, CachedAnswer) or not cacheable_request(request) or not cacheable_response(response):
            return response
        if not hold(lambda: self.keep(request, settings, response)):  # held while its output is validated
            self.keep(request, settings, response)
        return response


def _read_entry(text: str) -> tuple[Response, float | None]:
    """The answer and expiry time of an entry llmplex wrote; raises ``ValueError`` for anything else."""
    entry = json.loads(text)
    if not isinstance(entry, dict) or entry.get("format") != ENTRY_FORMAT:
        raise ValueError(f"not an llmplex entry (no format {ENTRY_FORMAT!r})")
    expires = entry.get("expires")
    if expires is not None and (
        isinstance(expires, bool) or not isinstance(expires, (int, float)) or not math.isfinite(expires)
    ):
        raise ValueError(f"expires is {expires!r}, not a time")
    response = Response.model_validate(entry.get("response"))
    if not cacheable_response(response):
        raise ValueError(f"the entry holds an answer llmplex never caches (finish_reason {response.finish_reason!r})")
    return response, expires


async def _resolved(answer: CachedAnswer) -> CachedAnswer:
    return answer


def _warn(what: str, error: BaseException) -> None:
    warnings.warn(
        f"llmplex response cache {what} ({type(error).__name__}: {error}); the call goes to the provider. "
        "Clear the cache directory ([cache] directory or $LLMPLEX_CACHE_DIR/responses) if this repeats.",
        CacheWarning,
        stacklevel=3,
    )
