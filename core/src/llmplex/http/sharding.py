"""An async transport that spreads requests over several connection pools, for many requests in flight.

Before each request, an ``httpx`` (and ``httpx2``) connection pool checks every
connection it holds, so with 64 requests in flight on one pool most of the
client's time goes to that bookkeeping: a raw ``httpx.AsyncClient`` then
serves fewer requests per second than one request at a time would suggest.
``sharded_transport`` keeps several ordinary ``AsyncHTTPTransport`` pools
and hands each request to the pool with the fewest requests waiting for their
answer (the first of them on a tie), so each pool checks only its share of the
connections while one request at a time keeps using one connection. Everything else is
the library's own transport (TLS, proxies from the environment through the
client's mounts, HTTP/1.1 keep-alive, mocks that patch the library's pools)::

    client = httpx.AsyncClient(transport=sharded_transport(limits=httpx.Limits(max_connections=1000)))
"""

from __future__ import annotations

import functools
import importlib
import math
from types import ModuleType
from typing import Any

from llmplex.errors import LLMConfigurationError

__all__ = ["DEFAULT_SHARDS", "sharded_transport"]

DEFAULT_SHARDS = 16
"""Pools per transport: 64 requests in flight leave each about 4 connections to check."""


def sharded_transport(http: ModuleType | None = None, *, shards: int = DEFAULT_SHARDS, **kwargs: Any) -> Any:
    """An ``http.AsyncBaseTransport`` (``httpx`` by default, or ``httpx2``) over ``shards`` pools; a request goes
    to the pool with the fewest requests waiting for their answer.

    ``kwargs`` are those of ``http.AsyncHTTPTransport``; ``limits`` bounds all pools together (each gets its
    share, rounded up). Closing it closes every pool.
    """
    library = http or importlib.import_module("httpx")
    if shards < 1:
        raise LLMConfigurationError(f"sharded_transport() needs at least one pool, got shards={shards}")
    limits = kwargs.pop("limits", None) or library.Limits(max_connections=100, max_keepalive_connections=20)
    share = library.Limits(
        max_connections=_share(limits.max_connections, shards),
        max_keepalive_connections=_share(limits.max_keepalive_connections, shards),
        keepalive_expiry=limits.keepalive_expiry,
    )
    tls = {name: kwargs.pop(name) for name in ("verify", "cert") if name in kwargs}
    # one TLS context for all pools: building one reads the CA bundle (tens of ms)
    context = library.create_ssl_context(trust_env=kwargs.get("trust_env", True), **tls)
    pools = [library.AsyncHTTPTransport(verify=context, limits=share, **kwargs) for _ in range(shards)]
    return _sharded_class(library)(pools)


def _share(total: int | None, shards: int) -> int | None:
    return None if total is None else math.ceil(total / shards)


@functools.cache
def _sharded_class(library: ModuleType) -> type[_Sharded]:
    return type("ShardedAsyncTransport", (_Sharded, library.AsyncBaseTransport), {})


class _Sharded:
    """Hands each request to the pool with the fewest requests waiting for their answer."""

    def __init__(self, pools: list[Any]) -> None:
        self.pools = pools
        self.busy = [0] * len(pools)

    async def handle_async_request(self, request: Any) -> Any:
        index = self.busy.index(min(self.busy))
        self.busy[index] += 1
        try:
            return await self.pools[index].handle_async_request(request)
        finally:
            self.busy[index] -= 1

    async def aclose(self) -> None:
        for pool in self.pools:
            await pool.aclose()
