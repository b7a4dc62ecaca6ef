"""``LLMClient``: one model called per entity of a simulation or ETL job, with response chains.

llm = LLMClient("openai:gpt-4o-mini", entities=agents, default_depth=3)
plan = await llm.create_response("Plan the day.", agent_state, DayPlan, entity_key="plan:agent-7")
results = await llm.create_batch([LLMRequest(..., entity_key=f"plan:{a['identity']['id']}") for a in agents])
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pydantic_core

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

__all__ = ["LLMClient", "RateLimitWarning"]

logger = logging.getLogger("llmplex")


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


class LLMClient:
    """Structured answers per entity, for batch pipelines.

    ``entities`` are plain dicts (as loaded from JSON state files), mutated in
    place: usage accumulates in ``entity["_llm"]["usage"]`` and each response
    chain's ids in ``entity["_llm"]["<chain>_chain"]``. An entity's id is
    ``entity["identity"]["id"]`` unless ``id_of`` says otherwise; entities
    without one are skipped. ``default_depth`` is how many responses a chain
    keeps (0: independent requests); chains need a provider that declares
    response-chain support. Extra keyword arguments (``temperature``,
    ``output_retries``, ``timeout``, ...) go to every ``complete`` call.
    """

    def __init__(
        self,
        model: str,
        entities: Iterable[dict[str, Any]] = (),
        default_depth: int = 0,
        *,
        id_of: Callable[[dict[str, Any]], Any] | None = None,
        client: Any = None,
        concurrency: int = 16,
        **call_kwargs: Any,
    ) -> None:
        from llmplex.client import Client

        self.client: Client = client if client is not None else Client()
        self.model = model
        self.route = self.client.route(model)
        self.entities = EntityIndex(entities, id_of or default_id_of)
        self.default_depth = _depth(default_depth, "default_depth")
        self.concurrency = checked_concurrency(concurrency)
        self.call_kwargs = call_kwargs
        if self.default_depth > 0:
            self._require_chains()
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

        At most ``concurrency`` requests are in flight; requests for the same
        entity run one after another, in order, so its chain stays consistent.
        Warns (:class:`RateLimitWarning`) with the number of rate-limit hits.
        """
        results: list[Any] = [None] * len(requests)
        counter = _RateLimitCounter()
        gate = asyncio.Semaphore(self.concurrency)

        async def run_group(indexes: list[int]) -> None:
            for index in indexes:
                async with gate:
                    results[index] = await settle(self._run(requests[index]))

        self.client.host.register_observer(counter)  # for this batch only: observers must not pile up
        try:
            async with asyncio.TaskGroup() as group:
                for indexes in self._groups(requests):
                    group.create_task(run_group(indexes))
        finally:
            self.client.host.unregister_observer(counter)
        hits = counter.hits + sum(isinstance(r, LLMRateLimitError) for r in results)
        if hits:
            message = (
                f"{hits} rate-limit hits (HTTP 429) during a batch of {len(requests)} requests to {self.model}; "
                "lower concurrency or raise the provider's rate limit"
            )
            logger.warning(message)
            warnings.warn(message, RateLimitWarning, stacklevel=2)
        return results

    # -- one request -----------------------------------------------------------------------

    def _groups(self, requests: Sequence[LLMRequest]) -> list[list[int]]:
        """Request indexes grouped by entity (in order); requests without an entity stand alone."""
        groups: dict[object, list[int]] = {}
        for index, request in enumerate(requests):
            key: object = index if request.entity_key is None else split_entity_key(request.entity_key)[1]
            groups.setdefault(key, []).append(index)
        return list(groups.values())

    async def _run(self, request: LLMRequest) -> Any:
        depth = self.default_depth if request.depth_override is None else _depth(request.depth_override, "depth")
        if request.entity_key is None:
            return (await self._ask(request, None)).output
        entity_id, entity, chain = self.entities.resolve(request.entity_key)
        if depth == 0:
            chain = None  # independent requests: usage is still counted
        elif chain is not None:
            self._require_chains()
        async with self._lock(entity_id):
            previous = previous_response(entity, chain) if chain is not None else None
            response = await self._ask(request, previous)
            record_usage(entity, response.usage)
            if chain is not None and response.response_id:
                for evicted in slide_chain(entity, chain, response.response_id, depth):
                    await self._delete(evicted)
        return response.output

    async def _ask(self, request: LLMRequest, previous_response_id: str | None) -> Any:
        return await self.client.acomplete(
            self.model,
            _as_text(request.input_data),
            system=request.instructions,
            output=request.schema,
            previous_response_id=previous_response_id,
            **self.call_kwargs,
        )

    # -- provider support ------------------------------------------------------------------

    def _require_chains(self) -> None:
        if not self.route.provider.capabilities.response_chains:
            raise LLMConfigurationError(
                f"response chains (depth > 0) need a provider that supports them, and {self.route.provider.name!r} "
                f"does not declare response_chains; use depth 0 (independent requests) or another provider"
            )

    async def _delete(self, response_id: str) -> None:
        """Delete an evicted response at the provider, when it supports deletion (failures are only logged)."""
        provider = self.route.provider
        if not provider.capabilities.delete_response:
            return
        try:
            deleted = await asyncio.to_thread(
                provider.hooks.delete_response,
                response_id=response_id,
                settings=provider.settings,
                client=provider.client(False),
            )
            if inspect.isawaitable(deleted):
                await deleted
        except Exception as exc:
            logger.warning(
                "could not delete response %s at %s: %s: %s", response_id, provider.name, type(exc).__name__, exc
            )

    def _lock(self, entity_id: str) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._locks_loop is not loop:
            self._locks, self._locks_loop = {}, loop
        lock = self._locks.get(entity_id)
        if lock is None:
            lock = self._locks[entity_id] = asyncio.Lock()
        return lock


def _depth(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LLMConfigurationError(f"{name} must be a whole number >= 0 (0: independent requests), got {value!r}")
    return value


def _as_text(input_data: Any) -> str:
    if isinstance(input_data, str):
        return input_data
    return pydantic_core.to_json(input_data, indent=2, fallback=str).decode()
