"""``LLMClient``: one model called per entity of a simulation or ETL job, with response chains.

llm = LLMClient("openai:gpt-4o-mini", entities=agents, default_depth=3)
plan = await llm.create_response("Plan the day.", agent_state, DayPlan, entity_key="plan:agent-7")
results = await llm.create_batch([LLMRequest(..., entity_key=f"plan:{a['identity']['id']}") for a in agents])
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from llmplex.errors import LLMConfigurationError, LLMDeadlineExceededError
from llmplex.facade.calls import EntityCalls, RateLimitWarning
from llmplex.facade.entities import STATE_KEY
from llmplex.facade.request import LLMRequest, input_text
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.guard import await_before, in_worker

if TYPE_CHECKING:
    from llmplex.plugins.host import PluginHost
    from llmplex.routing import Route
    from llmplex.types import Response

__all__ = ["LLMClient", "RateLimitWarning", "delete_response"]

logger = logging.getLogger("llmplex")


class LLMClient(EntityCalls):
    """Structured answers per entity, for batch pipelines.

    ``entities`` are plain dicts (as loaded from JSON state files), mutated in
    place: usage accumulates in ``entity["_llm"]["usage"]`` and each response
    chain's ids in ``entity["_llm"]["<chain>_chain"]``. An entity's id is
    ``entity["identity"]["id"]`` unless ``id_of`` says otherwise; entities
    without one are skipped. ``default_depth`` is how many responses a chain
    keeps (0: independent requests); chains need a provider that declares
    response-chain support. At most ``concurrency`` requests of a batch are in
    flight. Extra keyword arguments (``temperature``, ``output_retries``,
    ``timeout``, ...) go to every ``complete`` call.
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

        super().__init__(entities, default_depth, id_of=id_of, concurrency=concurrency, state_key=STATE_KEY)
        self.client: Client = client if client is not None else Client()
        self.model = model
        self.route = self.client.route(model)
        self.call_kwargs = call_kwargs
        if self.default_depth > 0:
            self._require_chains()

    async def _ask(self, request: LLMRequest, previous_response_id: str | None) -> Response:
        return await self.client.acomplete(
            self.model,
            input_text(request.input_data),
            system=request.instructions,
            output=request.schema,
            previous_response_id=previous_response_id,
            **self.call_kwargs,
        )

    def _host(self) -> PluginHost:
        return self.client.host

    def _target(self) -> str:
        return self.model

    def _require_chains(self) -> None:
        if not self.route.provider.capabilities.response_chains:
            raise LLMConfigurationError(
                f"response chains (depth > 0) need a provider that supports them, and {self.route.provider.name!r} "
                f"does not declare response_chains; use depth 0 (independent requests) or another provider"
            )

    async def _delete(self, response_id: str) -> None:
        await delete_response(self.route, response_id, self.call_kwargs.get("timeout") or self.client.config.timeout)


async def delete_response(route: Route, response_id: str, timeout: float | None = None) -> bool:
    """Delete a stored response at ``route``'s provider, when it supports deletion.

    ``True`` when it was deleted; ``False`` when it was not (the provider cannot
    delete, does not know the id, or failed). Failures, and a deletion still
    running after ``timeout`` seconds, are only logged.
    """
    provider = route.provider
    if not provider.capabilities.delete_response:
        return False

    async def deleting() -> bool:
        deleted = await in_worker(
            lambda: provider.hooks.delete_response(
                response_id=response_id, settings=provider.settings, client=provider.client(False)
            )
        )
        if inspect.isawaitable(deleted):
            deleted = await deleted
        if deleted is False:
            logger.warning(
                "response %s was not deleted at %s: the provider does not know it", response_id, provider.name
            )
        return deleted is not False

    def late() -> LLMDeadlineExceededError:
        return LLMDeadlineExceededError(f"the deletion took longer than {timeout}s", provider=provider.name)

    try:
        return await await_before(deleting, Deadline.after(timeout) if timeout is not None else None, late)
    except Exception as exc:
        logger.warning(
            "could not delete response %s at %s: %s: %s", response_id, provider.name, type(exc).__name__, exc
        )
        return False
