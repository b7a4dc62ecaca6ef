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

from llmplex.errors import LLMConfigurationError
from llmplex.facade.client import delete_response
from llmplex.facade.request import input_text

if TYPE_CHECKING:
    from llmplex.client import Client
    from llmplex.types import Response

__all__ = ["AdapterResponse", "OpenAIAdapter", "ResponseUsage"]

logger = logging.getLogger("llmplex.compat.util_llm")

T = TypeVar("T")


@dataclass(frozen=True)
class ResponseUsage:
    """Tokens one response consumed."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class AdapterResponse(Generic[T]):
    """One answer: the parsed ``schema`` instance, the stored response's id, and its usage."""

    parsed: T
    response_id: str
    usage: ResponseUsage


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
        response: Response = await self.client.acomplete(
            self.model,
            input_text(input_data),
            output=schema,
            previous_response_id=previous_response_id,
            throttle=self.throttle,
            **options,
        )
        usage = response.usage
        return AdapterResponse(
            parsed=response.output,
            response_id=response.response_id or "",
            usage=ResponseUsage(usage.input_tokens, usage.output_tokens, usage.reasoning_tokens, usage.cached_tokens),
        )

    async def delete_response(self, response_id: str) -> None:
        """Delete a stored response (an evicted chain link); failures are logged, not raised."""
        await delete_response(self.client.route(self.model), response_id)
