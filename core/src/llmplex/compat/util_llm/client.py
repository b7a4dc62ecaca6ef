"""util_llm's ``LLMClient`` and ``ResponseChainManager`` on llmplex's entity facade.

State lives where util_llm kept it, under ``entity["_openai"]``, so state files
written by util_llm are read as they are: ``"<chain>_chain"`` lists (the last id
continues the chain) and ``"usage"`` totals. As in util_llm, a request with an
``entity_key`` continues the stored chain's last response whatever its depth
(depth only says whether and how far the chain grows), and a key naming an
unknown entity sends the request without a chain and records nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from llmplex.compat.util_llm.stats import BatchStats
from llmplex.errors import LLMError
from llmplex.facade.calls import EntityCalls, Target
from llmplex.facade.entities import (
    EntityIndex,
    default_id_of,
    previous_response,
    record_usage,
    slide_chain,
    split_entity_key,
)
from llmplex.facade.request import LLMRequest
from llmplex.types import Response, Usage

if TYPE_CHECKING:
    from llmplex.plugins.host import PluginHost

__all__ = ["STATE_KEY", "LLMClient", "ResponseChainManager"]

logger = logging.getLogger("llmplex.compat.util_llm")

STATE_KEY = "_openai"


class ResponseChainManager:
    """The response chains stored in entities (mutated in place), by ``"chain:entity_id"`` key.

    ``entities`` maps each entity's ``identity.id`` to the entity; entities
    without one are skipped.
    """

    def __init__(self, entities: Iterable[dict[str, Any]]) -> None:
        self.index = EntityIndex(entities, default_id_of)
        self.entities = self.index.by_id

    def _parse_key(self, entity_key: str) -> tuple[str, str]:
        """``"intention:bob"`` as ``("bob", "intention")``; a key without ``:`` has no chain (``""``)."""
        chain, entity_id = split_entity_key(entity_key)
        return entity_id, chain or ""

    def get_previous(self, entity_key: str) -> str | None:
        """The chain's last response id, or ``None`` (empty chain, unknown entity, no chain in the key)."""
        entity_id, chain = self._parse_key(entity_key)
        entity = self.entities.get(entity_id)
        if entity is None or not chain:
            return None
        return previous_response(entity, chain, STATE_KEY)

    def confirm(self, entity_key: str, response_id: str, depth: int) -> str | None:
        """Append ``response_id`` to the chain, keeping at most ``depth`` ids; return the evicted id.

        Depth 0 changes nothing. A stored chain longer than ``depth`` is cut to
        ``depth`` at once; the oldest evicted id is returned.
        """
        entity_id, chain = self._parse_key(entity_key)
        entity = self.entities.get(entity_id)
        if depth == 0 or entity is None or not chain:
            return None
        evicted = slide_chain(entity, chain, response_id, depth, STATE_KEY)
        return evicted[0] if evicted else None


class LLMClient(EntityCalls):
    """Structured answers per entity through one phase's adapter: ``LLMClient(adapter, entities, default_depth)``.

    ``adapter`` is an ``OpenAIAdapter`` or any
    object with util_llm's ``execute`` and ``delete_response`` coroutines. A
    batch runs every request at once (one entity's requests in order) and
    returns each result or its LLMError in request order.
    """

    def __init__(self, adapter: Any, entities: list[dict[str, Any]], default_depth: int = 0) -> None:
        self.adapter = adapter
        self.chain_manager = ResponseChainManager(entities)
        self._last_batch_stats = BatchStats()
        super().__init__(self.chain_manager.index, default_depth, id_of=None, concurrency=None, state_key=STATE_KEY)

    async def create_response(
        self,
        instructions: str,
        input_data: Any,
        schema: Any,
        entity_key: str | None = None,
        depth_override: int | None = None,
    ) -> Any:
        """The ``schema`` instance the model answers with; raises the LLMError on failure."""
        self._last_batch_stats = BatchStats()
        return await super().create_response(instructions, input_data, schema, entity_key, depth_override)

    async def create_batch(self, requests: Sequence[LLMRequest]) -> list[Any]:
        """Every request's ``schema`` instance or its LLMError, in request order (failures are returned)."""
        self._last_batch_stats = BatchStats()
        return await super().create_batch(requests)

    def get_last_batch_stats(self) -> BatchStats:
        """The token and request totals of the last ``create_batch`` or ``create_response``."""
        return self._last_batch_stats

    async def _ask(self, request: LLMRequest, previous_response_id: str | None) -> Response:
        stats = self._last_batch_stats
        try:
            answer = await self.adapter.execute(
                instructions=request.instructions,
                input_data=request.input_data,
                schema=request.schema,
                previous_response_id=previous_response_id,
            )
        except Exception as error:
            stats.record(request.entity_key, error=error)
            raise
        stats.record(request.entity_key, answer)
        usage = answer.usage
        if request.entity_key is not None:
            self._add_usage_totals(request.entity_key, usage)
        return Response(
            output=answer.parsed,
            response_id=answer.response_id or None,
            usage=Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens),
        )

    def _add_usage_totals(self, entity_key: str, usage: Any) -> None:
        """util_llm's later totals beside llmplex's: ``total_tokens``, ``reasoning_tokens``, ``cached_tokens``."""
        target = self._entity(entity_key)
        if target is None:
            return
        totals = target[1].setdefault(STATE_KEY, {}).setdefault("usage", {})
        if isinstance(totals, dict):
            for name in ("total_tokens", "reasoning_tokens", "cached_tokens"):
                amount = getattr(usage, name, 0)
                totals[name] = totals.get(name, 0) + (amount if isinstance(amount, int) else 0)

    async def _delete(self, response_id: str) -> None:
        await self.adapter.delete_response(response_id)

    def _require_chains(self) -> None:
        """util_llm's adapter keeps every response (the Responses API stores them): nothing to check."""

    def _host(self) -> PluginHost | None:
        from llmplex.client import Client

        client = getattr(self.adapter, "llmplex_client", None) or getattr(self.adapter, "client", None)
        return client.host if isinstance(client, Client) else None

    def _target(self) -> str:
        return str(getattr(self.adapter, "model", type(self.adapter).__name__))

    def _entity(self, entity_key: str) -> Target | None:
        chain, entity_id = split_entity_key(entity_key)
        entity = self.chain_manager.entities.get(entity_id)
        if entity is None:
            logger.debug("entity_key %r names no known entity: sent without a chain", entity_key)
            return None
        return entity_id, entity, chain

    def _previous(self, entity: dict[str, Any], chain: str | None, depth: int) -> str | None:
        return previous_response(entity, chain, STATE_KEY) if chain is not None else None

    # -- util_llm's internal helpers, which its own tests call ---------------------------------

    def _accumulate_usage(self, entity_key: str, usage: Any) -> None:
        """Add one response's ``ResponseUsage`` to the entity's ``_openai.usage`` totals (unknown entity: nothing)."""
        entity_id, _ = self.chain_manager._parse_key(entity_key)
        entity = self.chain_manager.entities.get(entity_id)
        if entity:
            record_usage(entity, Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens), STATE_KEY)
            self._add_usage_totals(entity_key, usage)

    def _process_result(self, request: LLMRequest, result: Any) -> Any:
        """A batch slot: the parsed answer, the LLMError, or any other exception as an LLMError."""
        if isinstance(result, BaseException):
            return result if isinstance(result, LLMError) else LLMError(f"Unexpected error: {result}", cause=result)
        return result.parsed
