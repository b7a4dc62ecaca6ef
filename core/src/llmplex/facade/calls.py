"""``EntityCalls``: per-entity requests, response chains, usage and ordered batches, whatever sends them.

``LLMClient`` sends through an ``llmplex.Client``;
``llmplex.compat.util_llm.LLMClient`` sends through a util_llm adapter. Both
share this bookkeeping: the chain window, the usage totals, one entity's
requests in order, the batch's results in request order, the 429 count.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from llmplex.batching.run import checked_concurrency, settle
from llmplex.errors import LLMConfigurationError, LLMRateLimitError
from llmplex.events import Event, Throttled
from llmplex.facade.entities import (
    EntityIndex,
    default_id_of,
    previous_response,
    record_usage,
    slide_chain,
    split_entity_key,
)
from llmplex.facade.request import LLMRequest
from llmplex.hookspecs import hookimpl

if TYPE_CHECKING:
    from llmplex.plugins.host import PluginHost
    from llmplex.types import Response

__all__ = ["EntityCalls", "RateLimitWarning", "Target", "checked_depth"]

logger = logging.getLogger("llmplex")

Target = tuple[str, dict[str, Any], str | None]
"""An entity a request is for: its id, the entity dict, and the chain named in the key (or ``None``)."""


class RateLimitWarning(UserWarning):
    """A batch hit the provider's rate limit; the count is in the message."""


class _RateLimitCounter:
    """An observer plugin counting the 429s that were retried."""

    def __init__(self) -> None:
        self.hits = 0

    @hookimpl
    def llmplex_event(self, event: Event) -> None:
        if isinstance(event, Throttled) and event.reason == LLMRateLimitError.__name__:
            self.hits += 1


def checked_depth(value: Any, name: str) -> int:
    """``value`` when it is a whole number >= 0; raises LLMConfigurationError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LLMConfigurationError(f"{name} must be a whole number >= 0 (0: independent requests), got {value!r}")
    return value


class EntityCalls(ABC):
    """Structured answers per entity; subclasses say how one request is sent (``_ask``).

    ``entities`` are plain dicts (or an index of them), mutated in place under ``entity[state_key]``:
    ``usage`` totals and each chain's response ids (``<chain>_chain``).
    ``concurrency`` bounds the requests in flight (``None``: no bound).
    """

    def __init__(
        self,
        entities: Iterable[dict[str, Any]] | EntityIndex,
        default_depth: int,
        *,
        id_of: Callable[[dict[str, Any]], Any] | None,
        concurrency: int | None,
        state_key: str,
    ) -> None:
        self.entities = entities if isinstance(entities, EntityIndex) else EntityIndex(entities, id_of or default_id_of)
        self.default_depth = checked_depth(default_depth, "default_depth")
        self.concurrency = None if concurrency is None else checked_concurrency(concurrency)
        self.state_key = state_key
        self._locks: dict[str, asyncio.Lock] = {}
        self._locks_loop: asyncio.AbstractEventLoop | None = None

    # -- public API ------------------------------------------------------------------------

    async def create_response(
        self,
        instructions: str,
        input_data: Any,
        schema: Any,
        entity_key: str | None = None,
        depth_override: int | None = None,
    ) -> Any:
        """The ``schema`` instance the model answers with; raises the LLMError on failure."""
        return await self._run(LLMRequest(instructions, input_data, schema, entity_key, depth_override))

    async def create_batch(self, requests: Sequence[LLMRequest]) -> list[Any]:
        """Every request's ``schema`` instance or its LLMError, in request order (failures are returned).

        Requests for the same entity run one after another, in order, so its
        chain stays consistent. Warns (``RateLimitWarning``) with the number
        of rate-limit hits.
        """
        results: list[Any] = [None] * len(requests)
        counter = _RateLimitCounter()
        gate: contextlib.AbstractAsyncContextManager[Any] = (
            contextlib.nullcontext() if self.concurrency is None else asyncio.Semaphore(self.concurrency)
        )

        async def run_group(indexes: list[int]) -> None:
            for index in indexes:
                async with gate:
                    results[index] = await settle(self._run(requests[index]))

        async with self._observing(counter), asyncio.TaskGroup() as group:
            for indexes in self._groups(requests):
                group.create_task(run_group(indexes))
        hits = counter.hits + sum(isinstance(r, LLMRateLimitError) for r in results)
        if hits:
            message = (
                f"{hits} rate-limit hits (HTTP 429) during a batch of {len(requests)} requests to {self._target()}; "
                "lower concurrency or raise the provider's rate limit"
            )
            logger.warning(message)
            warnings.warn(message, RateLimitWarning, stacklevel=2)
        return results

    # -- what subclasses provide -----------------------------------------------------------

    @abstractmethod
    async def _ask(self, request: LLMRequest, previous_response_id: str | None) -> Response:
        """Send one request (continuing ``previous_response_id``) and return its answer."""

    @abstractmethod
    async def _delete(self, response_id: str) -> None:
        """Delete a response evicted from a chain (failures are only logged)."""

    @abstractmethod
    def _require_chains(self) -> None:
        """Raise LLMConfigurationError when the provider keeps no response chains."""

    def _host(self) -> PluginHost | None:
        """Where the batch's retried 429s can be observed, if anywhere."""
        return None

    def _target(self) -> str:
        """What requests go to, for messages."""
        return type(self).__name__

    def _entity(self, entity_key: str) -> Target | None:
        """The entity ``entity_key`` names (``None``: send the request without an entity)."""
        return self.entities.resolve(entity_key)

    def _previous(self, entity: dict[str, Any], chain: str | None, depth: int) -> str | None:
        """The response id the request continues: the chain's last, when the chain is kept (depth > 0)."""
        return previous_response(entity, chain, self.state_key) if chain is not None and depth > 0 else None

    # -- one request -----------------------------------------------------------------------

    def _groups(self, requests: Sequence[LLMRequest]) -> list[list[int]]:
        """Request indexes grouped by entity (in order); requests without an entity stand alone."""
        groups: dict[object, list[int]] = {}
        for index, request in enumerate(requests):
            key: object = index if request.entity_key is None else split_entity_key(request.entity_key)[1]
            groups.setdefault(key, []).append(index)
        return list(groups.values())

    async def _run(self, request: LLMRequest) -> Any:
        depth = self.default_depth if request.depth_override is None else checked_depth(request.depth_override, "depth")
        target = None if request.entity_key is None else self._entity(request.entity_key)
        if target is None:
            return (await self._ask(request, None)).output
        entity_id, entity, chain = target
        if depth > 0 and chain is not None:
            self._require_chains()
        async with self._lock(entity_id):
            response = await self._ask(request, self._previous(entity, chain, depth))
            record_usage(entity, response.usage, self.state_key)
            if depth > 0 and chain is not None and response.response_id:
                for evicted in slide_chain(entity, chain, response.response_id, depth, self.state_key):
                    await self._delete(evicted)
        return response.output

    @contextlib.asynccontextmanager
    async def _observing(self, counter: _RateLimitCounter) -> AsyncIterator[None]:
        host = self._host()
        if host is None:
            yield
            return
        host.register_observer(counter)  # for this batch only: observers must not pile up
        try:
            yield
        finally:
            host.unregister_observer(counter)

    def _lock(self, entity_id: str) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._locks_loop is not loop:
            self._locks, self._locks_loop = {}, loop
        lock = self._locks.get(entity_id)
        if lock is None:
            lock = self._locks[entity_id] = asyncio.Lock()
        return lock
