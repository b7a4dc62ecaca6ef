"""The rows of a provider-native batch: each request formatted for its provider, and its result read back."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llmplex.batching.run import BatchResult, split_item
from llmplex.engine.attempt import Attempt
from llmplex.errors import LLMAPIError, LLMConfigurationError, LLMError, LLMServerError, LLMTimeoutError
from llmplex.tooling.conversation import first_round
from llmplex.types import BatchOutcome, BatchRequest, Request
from llmplex.types.pricing import priced_model

if TYPE_CHECKING:
    from llmplex.client import Client
    from llmplex.routing import Route
    from llmplex.structured.plan import OutputPlan

__all__ = ["BATCH_HOOKS", "PreparedRow", "custom_id", "prepare_row", "require_batch_support"]

BATCH_HOOKS = ("batch_submit", "batch_poll", "batch_results")
"""The hooks a provider plugin implements to support ``--provider-batch``."""

_CALL_ONLY = ("timeout", "deadline", "throttle", "budget", "fallbacks", "output_retries", "max_tool_rounds")
"""Arguments about how llmplex runs a call online; a provider runs each batch request once, in its own window
(so an invalid structured answer cannot be asked again)."""


def custom_id(index: int) -> str:
    """The id sent to the provider for the request on row ``index``: ids in the input may repeat or be missing."""
    return f"r{index}"


@dataclass(frozen=True)
class PreparedRow:
    """One request ready for its provider's Batch API."""

    index: int
    route: Route
    request: Request
    payload: dict[str, Any]
    plan: OutputPlan | None = None

    @property
    def group(self) -> tuple[str, str]:
        """Rows of one provider instance and model share batches (OpenAI takes one model per batch)."""
        return self.route.provider.name, self.route.model

    def batch_request(self) -> BatchRequest:
        """The row as the ``llmplex_batch_submit`` hook gets it."""
        return BatchRequest(custom_id(self.index), self.payload)

    def size(self, overhead: int) -> int:
        """Bytes the row counts for against a provider's batch size limit (see ``BatchLimits``)."""
        return len(json.dumps(self.payload)) + overhead

    def _answer(self, raw: Any) -> BatchResult:
        """The Response of a succeeded request, with its structured output read, or why it cannot be one.

        With structured output, the response cache keeps the answer only when its value is valid."""
        if self.plan is None:
            return self._read(raw)
        from llmplex.cache.held import held_writes  # not at import: `import llmplex` leaves the cache out

        with held_writes() as held:
            result = self._read(raw)
            if not isinstance(result, LLMError):
                held.commit()
            return result

    def _read(self, raw: Any) -> BatchResult:
        attempt = Attempt(self.route)
        try:
            response = attempt.parse(raw, self.request)
        except Exception as exc:  # a refusal, truncation, or a body the plugin cannot read
            return attempt.classify(exc)
        model = response.model or self.group[1]
        plugin = self.route.provider.info.name
        usage = response.usage.priced(plugin, priced_model(plugin, model, self.group[1]), batch=True)
        response = response.model_copy(update={"provider": self.group[0], "model": model, "usage": usage})
        if self.plan is None:
            return response
        try:
            return response.model_copy(update={"output": self.plan.read(response)})
        except LLMError as invalid:  # a provider batch cannot ask again
            return invalid

    def result(self, outcome: BatchOutcome, batch_id: str) -> BatchResult:
        """The Response or typed error the provider's ``outcome`` stands for."""
        provider, model = self.group
        if outcome.kind == "succeeded":
            return self._answer(outcome.raw)
        if outcome.kind == "expired":
            return LLMTimeoutError(
                f"the provider's batch {batch_id} ended its processing window before this request ran (expired); "
                "send it again",
                provider=provider,
                model=model,
            )
        if outcome.kind == "canceled":
            message = f"the provider's batch {batch_id} was canceled before this request ran"
            return LLMAPIError(message, provider=provider, model=model)
        error = outcome.error or LLMServerError(f"the provider reported an error without details in batch {batch_id}")
        error.provider = error.provider or provider
        error.model = error.model or model
        return error


def prepare_row(client: Client, index: int, arguments: Mapping[str, Any]) -> PreparedRow:
    """Route, build and format one request of the file; raises the LLMError that makes it fail in place."""
    model, prompt, kwargs = split_item(arguments)
    unusable = [name for name in _CALL_ONLY if kwargs.get(name) is not None]
    if unusable:
        raise LLMConfigurationError(
            f"{', '.join(unusable)} cannot be used with --provider-batch: the provider runs each request once, "
            "within its own batch window; remove it from the line, or run without --provider-batch"
        )
    output, strategy = kwargs.pop("output", None), kwargs.pop("output_strategy", None)
    if output is None:
        route, request = client.build_request(model, prompt, **kwargs)
        return PreparedRow(index, route, request, Attempt(route).format(request))
    first = first_round(
        client.route(model).provider.capabilities,
        prompt,
        system=kwargs.pop("system", None),
        tools=kwargs.pop("tools", None),
        tool_choice=kwargs.pop("tool_choice", None),
        output=output,
        strategy=strategy,
    )
    route, request = client.build_request(
        model, first.messages, tools=first.tools, tool_choice=first.tool_choice, output=first.output, **kwargs
    )
    return PreparedRow(index, route, request, Attempt(route).format(request), first.plan)


def require_batch_support(route: Route) -> None:
    """Raise ``LLMConfigurationError`` naming the provider when its plugin has no Batch API hooks."""
    hooks = route.provider.hooks
    missing = [f"llmplex_{hook}" for hook in BATCH_HOOKS if not hooks.implements(hook)]
    if missing:
        provider = route.provider
        raise LLMConfigurationError(
            f"provider {provider.name!r} ({provider.plugin.entry.distribution}) has no provider-native batch: "
            f"its plugin does not implement {', '.join(missing)}. Nothing was sent; run without --provider-batch "
            "to send these requests one by one"
        )
