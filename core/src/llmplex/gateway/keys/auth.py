"""Virtual keys at the gateway's door: ``KeyAuthenticator`` (the ``Authenticator`` of ``llmplex serve``).

``authenticate`` accepts the master key (caller ``master``: every model, no caps)
or a virtual key looked up by its hash (cached ``[gateway] key_cache_seconds``; a
request in an entry's last quarter is served from it while one lookup per key
reads it again in the background): unknown, revoked or expired keys get a 401.
``admit`` routes the model as the client named it (aliases resolved) and refuses
with a 403 a model outside the key's patterns; the call's fallbacks are cut to
the models the key may use, so no alias or fallback ever reaches another. Then
the key's rate limits, calls in flight and budget are taken (``KeyLimits``:
429). What the request holds is given back by ``SpendRecorder`` when it ends.
"""

from __future__ import annotations

import asyncio
import contextvars
import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from llmplex.client import Client
from llmplex.errors import LLMError
from llmplex.gateway.errors import GatewayError
from llmplex.gateway.keys.access import Admission, Caller, CallTicket, unauthorized
from llmplex.gateway.keys.limits import Hold, KeyLimits
from llmplex.gateway.keys.store import KeyRecord, KeyStore, hash_key
from llmplex.gateway.keys.unpriced import unpriced_rates
from llmplex.reliability.budget import Budget

__all__ = ["KeyAuthenticator", "KeyCaller", "current_hold"]

_MAX_CACHED = 10_000
_REFRESH_AHEAD = 0.25  # the share of an entry's life, at its end, in which a request starts its refresh
_hold: contextvars.ContextVar[Hold | None] = contextvars.ContextVar("llmplex_gateway_hold", default=None)


def current_hold() -> Hold | None:
    """What the request being finished holds (set by ``admit`` in the request's own context), taken once."""
    hold = _hold.get()
    if hold is not None:
        _hold.set(None)
    return hold


@dataclass(frozen=True)
class KeyCaller(Caller):
    """A caller holding a virtual key (``record``) or the master key (``record`` is ``None``)."""

    record: KeyRecord | None = None
    client: Client | None = None

    def may_use(self, model: str) -> bool:
        """Whether the model ``model`` routes to is one of the key's patterns."""
        if self.record is None or not self.record.models:
            return True
        if self.client is None:
            return False
        try:
            return self.record.allows(self.client.route(model).spec)
        except LLMError:
            return False


class KeyAuthenticator:
    """The master key and the virtual keys of ``keys``, with their caps kept by ``limits``.

    ``on_admit`` runs in the request's own context as it is let in (``keyed_app`` passes the spend log's
    ``collect`` when ``[gateway] log_bodies`` is on). ``clock`` gives the cache's time in seconds.
    """

    def __init__(
        self,
        client: Client,
        keys: KeyStore,
        limits: KeyLimits,
        master_key: str,
        cache_seconds: float = 1.0,
        on_admit: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.on_admit = on_admit
        self.keys = keys
        self.limits = limits
        self.cache_seconds = cache_seconds
        self.clock = clock
        self._master = master_key.encode()
        self._cache: dict[str, tuple[float, float, KeyRecord | None]] = {}  # refresh from, expiry, record
        self._finding: dict[str, asyncio.Task[KeyRecord | None]] = {}  # one database lookup per key at a time
        self._forgotten = 0  # how many times ``forget`` ran: a lookup begun before one is not cached

    def __repr__(self) -> str:
        return f"KeyAuthenticator({self.keys!r})"

    def forget(self, name: str | None = None) -> None:
        """Drop cached lookups (of key ``name``, or all): the next request reads the database."""
        self._forgotten += 1
        self._finding.clear()  # requests from now on read the database again, not a lookup begun before
        if name is None:
            self._cache.clear()
            return
        for digest, (_, _, record) in list(self._cache.items()):
            if record is not None and record.name == name:
                self._cache.pop(digest, None)

    async def _lookup(self, credential: str) -> KeyRecord | None:
        digest = hash_key(credential)
        cached = self._cache.get(digest)
        now = self.clock()
        if cached is not None and cached[0] > now:
            return cached[2]
        finding = self._finding.get(digest)
        if finding is None:  # the requests that find the entry old share one lookup, not one each
            finding = asyncio.ensure_future(self._find(credential, digest, now))
            self._finding[digest] = finding
            finding.add_done_callback(partial(self._found, digest))
        if cached is not None and cached[1] > now:
            return cached[2]  # still valid: the lookup refreshes it in the background
        return await asyncio.shield(finding)  # a caller that leaves does not end the others' lookup

    async def _find(self, credential: str, digest: str, now: float) -> KeyRecord | None:
        forgotten = self._forgotten
        record = await asyncio.to_thread(self.keys.find, credential)
        if self.cache_seconds > 0 and forgotten == self._forgotten:
            if len(self._cache) >= _MAX_CACHED:
                self._cache.clear()
            expiry = now + self.cache_seconds
            self._cache[digest] = (expiry - self.cache_seconds * _REFRESH_AHEAD, expiry, record)
        return record

    def _found(self, digest: str, finding: asyncio.Task[KeyRecord | None]) -> None:
        if self._finding.get(digest) is finding:
            del self._finding[digest]
        if not finding.cancelled():
            finding.exception()  # retrieved: every waiter may have left before it failed

    async def authenticate(self, credential: str | None) -> Caller:
        """The master caller, a key's caller, or a 401 (no key, unknown, revoked, expired)."""
        if credential is None:
            raise unauthorized("no API key was sent")
        if hmac.compare_digest(credential.encode("utf-8", "surrogatepass"), self._master):
            return KeyCaller("master")
        record = await self._lookup(credential)
        if record is None:
            raise unauthorized("the API key is not valid for this gateway")
        status = record.status()
        if status != "active":
            raise unauthorized(f"the API key {record.name!r} is {status}")
        return KeyCaller(record.name, record=record, client=self.client)

    async def admit(self, caller: Caller, ticket: CallTicket) -> Admission:
        """The key's model patterns (403), then its rate limits, calls in flight and budget (429)."""
        if self.on_admit is not None:
            self.on_admit()
        record = caller.record if isinstance(caller, KeyCaller) else None
        if record is None:
            return Admission(caller)
        call_args: dict[str, Any] = {}
        if record.models:
            spec = self.client.route(ticket.model).spec
            if not record.allows(spec):
                raise GatewayError(
                    403,
                    f"key {record.name!r} may not use model {ticket.model!r} ({spec}); it may use "
                    f"{', '.join(record.models)}",
                    code="model_not_allowed",
                    kind="forbidden",
                )
            call_args["fallbacks"] = self._allowed_fallbacks(record, ticket.model, spec)
        if record.budget_usd is not None:
            call_args["budget"] = self._priced_budget(record)
        hold = await self.limits.admit(record, ticket.estimated_input_tokens, ticket.worst_case_usd)
        _hold.set(hold)
        return Admission(caller, call_args)

    def _priced_budget(self, record: KeyRecord) -> Budget:
        """The call's own USD cap for a key with a budget: core then refuses, before sending, a model whose
        price is unknown, unless ``[budget]`` gives the ``unpriced_*`` rates to count it at (never as $0)."""
        return replace(unpriced_rates(self.client.config.budget), max_cost_usd=record.budget_usd)

    def _allowed_fallbacks(self, record: KeyRecord, model: str, spec: str) -> list[str]:
        """The config's fallbacks of ``model`` that route to a model the key may use, in order."""
        table = self.client.config.fallbacks
        chain = table.get(model) or table.get(spec) or ()
        allowed = []
        for fallback in chain:
            try:
                if record.allows(self.client.route(fallback).spec):
                    allowed.append(fallback)
            except LLMError:
                continue
        return allowed
