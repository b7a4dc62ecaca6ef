"""util_llm's ``OpenAIAdapter``: one phase's settings, requests through llmplex's ``openai`` provider.

The adapter reads the application's ``PhaseConfig`` by attribute (``model``,
``max_completion``, ``timeout``, ``max_retries``, and when present
``temperature``, ``top_p``, ``reasoning_effort``, ``reasoning_summary``,
``truncation``), takes the key from ``OPENAI_API_KEY`` and the endpoint from
``OPENAI_BASE_URL`` as ``AsyncOpenAI()`` did, and always speaks the Responses
API: response chains need stored responses, whatever the endpoint.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from llmplex.errors import LLMConfigurationError, LLMIncompleteError
from llmplex.facade.client import delete_response
from llmplex.facade.request import input_text

if TYPE_CHECKING:
    from llmplex.client import Client
    from llmplex.types import Response

__all__ = ["AdapterResponse", "OpenAIAdapter", "ResponseDebugInfo", "ResponseUsage", "debug_info"]

logger = logging.getLogger("llmplex.compat.util_llm")

T = TypeVar("T")


@dataclass(frozen=True)
class ResponseUsage:
    """Tokens one response consumed; ``total_tokens`` is input plus output unless given."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    total_tokens: int = -1

    def __post_init__(self) -> None:
        if self.total_tokens < 0:
            object.__setattr__(self, "total_tokens", self.input_tokens + self.output_tokens)


@dataclass(frozen=True)
class ResponseDebugInfo:
    """What OpenAI said about one response: the model that answered, when, on which tier, the reasoning summary."""

    model: str | None = None
    created_at: int | None = None
    service_tier: str | None = None
    reasoning_summary: str | None = None


@dataclass(frozen=True)
class AdapterResponse(Generic[T]):
    """One answer: the stored response's id, the parsed ``schema`` instance, its usage and debug info."""

    response_id: str
    parsed: T
    usage: ResponseUsage
    debug: ResponseDebugInfo | None = None


def _raw_json(raw: Any) -> dict[str, Any]:
    for name in ("to_dict", "model_dump"):
        dump = getattr(raw, name, None)
        if callable(dump):
            raw = dump()
            break
    return raw if isinstance(raw, dict) else {}


def _summary(data: dict[str, Any]) -> str | None:
    parts = [
        str(part.get("text") or "")
        for item in data.get("output") or ()
        if isinstance(item, dict) and item.get("type") == "reasoning"
        for part in item.get("summary") or ()
        if isinstance(part, dict)
    ]
    return "\n".join(parts) if parts else None


def debug_info(response: Response) -> ResponseDebugInfo:
    """The debug info of an llmplex response (read from the Responses API JSON when it is there)."""
    data = _raw_json(response.raw)
    created = data.get("created_at")
    tier = data.get("service_tier")
    return ResponseDebugInfo(
        model=response.model or data.get("model"),
        created_at=int(created) if isinstance(created, (int, float)) and not isinstance(created, bool) else None,
        service_tier=tier if isinstance(tier, str) else None,
        reasoning_summary=_summary(data),
    )


_PROVIDER_REASONS = {"length": "max_output_tokens", "content_filter": "content_filter"}
"""llmplex's incomplete reasons as the Responses API's ``incomplete_details.reason``, util_llm's ``e.reason``."""


def _setting(config: Any, name: str) -> Any:
    return getattr(config, name, None)


def _number(config: Any, name: str, minimum: float, whole: bool) -> Any:
    value = _setting(config, name)
    if value is None:
        return None
    kinds = int if whole else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or value < minimum:
        kind = "a whole number" if whole else "a number"
        raise LLMConfigurationError(f"PhaseConfig.{name} must be {kind} >= {minimum:g}, got {value!r}")
    return value


class OpenAIAdapter:
    """Structured requests to OpenAI's Responses API for one phase: ``OpenAIAdapter(config.phase1)``.

    ``max_retries`` retries follow the first request (``max_retries + 1``
    requests at most), with llmplex's backoff and ``Retry-After``. ``client``
    may be an ``llmplex.Client`` to send through instead of a new one.
    """

    def __init__(self, config: Any, *, client: Client | None = None) -> None:
        from llmplex.client import Client

        model = _setting(config, "model")
        if not isinstance(model, str) or not model.strip():
            raise LLMConfigurationError(
                f"PhaseConfig.model must be an OpenAI model name such as 'gpt-4o', got {model!r}"
            )
        self.config = config
        self.model = f"openai:{model.strip()}"
        settings: dict[str, Any] = {"api": "responses"}
        timeout = _number(config, "timeout", 0.001, whole=False)
        if timeout is not None:
            settings["timeout"] = float(timeout)
        self.client: Client = client if client is not None else Client(providers={"openai": settings})
        retries = _number(config, "max_retries", 0, whole=True)
        self.throttle = None if retries is None else {"max_attempts": retries + 1}
        self.options = self._options(config)
        if client is None and getattr(self.client.route(self.model).provider.settings, "api_key", None) is None:
            # AsyncOpenAI() refuses to be built without a key, whatever OPENAI_BASE_URL says: so does this adapter
            raise LLMConfigurationError(
                "OpenAIAdapter cannot be built without an API key: set OPENAI_API_KEY "
                "(or api_key in the [providers.openai] table of your llmplex config)"
            )

    def __repr__(self) -> str:
        return f"OpenAIAdapter(model={self.model!r})"

    @staticmethod
    def _options(config: Any) -> dict[str, Any]:
        options: dict[str, Any] = {}
        max_completion = _number(config, "max_completion", 1, whole=True)
        if max_completion is not None:
            options["max_tokens"] = max_completion
        for name in ("temperature", "top_p"):
            if _setting(config, name) is not None:
                options[name] = _setting(config, name)
        extra: dict[str, Any] = {}
        effort, summary = _setting(config, "reasoning_effort"), _setting(config, "reasoning_summary")
        if (effort is not None or summary is not None) and _setting(config, "is_reasoning") is not False:
            extra["reasoning"] = {k: v for k, v in (("effort", effort), ("summary", summary)) if v is not None}
        if _setting(config, "truncation") is not None:
            extra["truncation"] = _setting(config, "truncation")
        options["provider_options"] = extra
        return options

    async def execute(
        self, instructions: str, input_data: Any, schema: type[T], previous_response_id: str | None = None
    ) -> AdapterResponse[T]:
        """Ask for a ``schema`` instance; ``instructions`` go in the request's ``instructions`` field.

        Retries (429, 5xx, timeouts) happen inside; the LLMError raised means they were exhausted.
        """
        options = dict(self.options)
        options["provider_options"] = {**options["provider_options"], "instructions": instructions}
        try:
            response: Response = await self.client.acomplete(
                self.model,
                input_text(input_data),
                output=schema,
                previous_response_id=previous_response_id,
                throttle=self.throttle,
                **options,
            )
        except LLMIncompleteError as error:
            error.reason = _PROVIDER_REASONS.get(error.reason, error.reason)
            raise
        usage = response.usage
        return AdapterResponse(
            response_id=response.response_id or "",
            parsed=response.output,
            usage=ResponseUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                reasoning_tokens=usage.reasoning_tokens,
                cached_tokens=usage.cached_tokens,
                total_tokens=usage.total_tokens,
            ),
            debug=debug_info(response),
        )

    async def delete_response(self, response_id: str) -> bool:
        """Delete a stored response (an evicted chain link): ``True`` when deleted, ``False`` when not
        (failures are logged, never raised)."""
        return await delete_response(self.client.route(self.model), response_id)
