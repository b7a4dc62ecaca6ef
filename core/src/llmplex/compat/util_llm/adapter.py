"""util_llm's ``OpenAIAdapter``: one phase's settings, requests through llmplex's ``openai`` provider.

The adapter reads the application's ``PhaseConfig`` by attribute (``model``,
``max_completion``, ``timeout``, ``max_retries``, and when present
``temperature``, ``top_p``, ``reasoning_effort``, ``reasoning_summary``,
``truncation``), takes the key from ``OPENAI_API_KEY`` and the endpoint from
``OPENAI_BASE_URL`` as ``AsyncOpenAI()`` did, and always speaks the Responses
API: response chains need stored responses, whatever the endpoint.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import TYPE_CHECKING, Any, TypeVar

from llmplex.compat.util_llm.base import AdapterResponse, ResponseDebugInfo, ResponseUsage, adapter_response
from llmplex.compat.util_llm.errors import as_util_llm
from llmplex.compat.util_llm.sdk_call import AdapterSDK, Pending, pending_call
from llmplex.compat.weakincentives.injection import inject
from llmplex.errors import LLMConfigurationError, LLMError, LLMRateLimitError, LLMTimeoutError
from llmplex.facade.request import input_text
from llmplex.reliability.clock import Clock

if TYPE_CHECKING:
    from llmplex.client import Client
    from llmplex.types import Response

__all__ = ["AdapterResponse", "OpenAIAdapter", "ResponseDebugInfo", "ResponseUsage", "debug_info", "parse_reset_ms"]

logger = logging.getLogger("llmplex.compat.util_llm")

T = TypeVar("T")


def _raw_json(raw: Any) -> dict[str, Any]:
    for name in ("to_dict", "model_dump"):
        dump = getattr(raw, name, None)
        if callable(dump):
            raw = dump()
            break
    return raw if isinstance(raw, dict) else {}


def _summary(data: dict[str, Any]) -> list[str] | None:
    parts = [
        str(part.get("text") or "")
        for item in data.get("output") or ()
        if isinstance(item, dict) and item.get("type") == "reasoning"
        for part in item.get("summary") or ()
        if isinstance(part, dict)
    ]
    return parts or None


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


async def _late_asleep(seconds: float) -> None:
    """``asyncio.sleep`` looked up at each wait, so a test that patches it (as util_llm's do) is obeyed."""
    await asyncio.sleep(seconds)


def parse_reset_ms(headers: Any) -> float:
    """Seconds to wait after a 429, from ``x-ratelimit-reset-tokens`` (``"100ms"``, ``"1.5s"`` or bare
    milliseconds; ``"1000ms"`` when missing) plus 0.5 s; 1.5 s when it cannot be read."""
    value = str(headers.get("x-ratelimit-reset-tokens", "1000ms"))
    try:
        if value.endswith("ms"):
            return int(value[:-2]) / 1000 + 0.5
        if value.endswith("s"):
            return float(value[:-1]) + 0.5
        return int(value) / 1000 + 0.5
    except ValueError:
        logger.warning("could not read the rate-limit reset header %r: waiting 1.5s", value)
        return 1.5


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

    ``client`` is the ``openai.AsyncOpenAI`` util_llm built (key from
    ``OPENAI_API_KEY``, endpoint from ``OPENAI_BASE_URL``, SDK retries off), or
    the one given: any object with ``responses.parse`` / ``delete``. Each
    ``execute`` calls ``client.responses.parse`` with util_llm's parameters
    inside one llmplex request, so ``max_retries`` retries (``max_retries + 1``
    requests at most), backoff, ``Retry-After``, the deadline and events are
    llmplex's. ``llmplex_client`` is the ``llmplex.Client`` that runs them.
    """

    def __init__(self, config: Any, *, client: Any = None, llmplex_client: Client | None = None) -> None:
        from llmplex.client import Client

        model = _setting(config, "model")
        if not isinstance(model, str) or not model.strip():
            raise LLMConfigurationError(
                f"PhaseConfig.model must be an OpenAI model name such as 'gpt-4o', got {model!r}"
            )
        if isinstance(client, Client):  # the 0.1 signature: an llmplex client to send through
            client, llmplex_client = None, client
        self.config = config
        self.model = f"openai:{model.strip()}"
        timeout = _number(config, "timeout", 0.001, whole=False)
        settings: dict[str, Any] = {"api": "responses"}
        if timeout is not None:
            settings["timeout"] = float(timeout)
        clock = Clock(asleep=_late_asleep)
        self.llmplex_client: Client = (
            llmplex_client if llmplex_client is not None else Client(providers={"openai": settings}, clock=clock)
        )
        retries = _number(config, "max_retries", 0, whole=True)
        self.throttle = None if retries is None else {"max_attempts": retries + 1}
        self.options = self._options(config)
        if client is not None and not callable(getattr(getattr(client, "responses", None), "parse", None)):
            raise LLMConfigurationError(
                f"client must have responses.parse(...) like openai.AsyncOpenAI, got {type(client).__name__}"
            )
        self.client: Any = client if client is not None else self._sdk_client(timeout)
        inject(self.llmplex_client, "openai", AdapterSDK(self))

    def _sdk_client(self, timeout: float | None) -> Any:
        """``AsyncOpenAI`` as util_llm built it, with the key and endpoint llmplex's config resolved."""
        settings = self.llmplex_client.route(self.model).provider.settings
        key = getattr(settings, "api_key", None)
        if key is None:
            # AsyncOpenAI() refuses to be built without a key, whatever OPENAI_BASE_URL says: so does this adapter
            raise LLMConfigurationError(
                "OpenAIAdapter cannot be built without an API key: set OPENAI_API_KEY "
                "(or api_key in the [providers.openai] table of your llmplex config)"
            )
        import openai

        secret = key.get_secret_value() if hasattr(key, "get_secret_value") else str(key)
        return openai.AsyncOpenAI(
            api_key=secret,
            base_url=getattr(settings, "base_url", None) or None,
            timeout=float(timeout) if timeout is not None else 600.0,
            max_retries=0,
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
        for name in ("truncation", "verbosity"):
            if _setting(config, name) is not None:
                extra[name] = _setting(config, name)
        options["provider_options"] = extra
        return options

    def _params(
        self, instructions: str, input_data: Any, schema: Any, previous_response_id: str | None
    ) -> dict[str, Any]:
        """The keyword arguments util_llm gave ``responses.parse``."""
        params: dict[str, Any] = {
            "model": self.model.removeprefix("openai:"),
            "instructions": instructions,
            "input": input_text(input_data),
            "text_format": schema,
            "store": True,
        }
        if "max_tokens" in self.options:
            params["max_output_tokens"] = self.options["max_tokens"]
        for name in ("temperature", "top_p"):
            if name in self.options:
                params[name] = self.options[name]
        if previous_response_id:
            params["previous_response_id"] = previous_response_id
        params.update(self.options["provider_options"])
        return params

    async def execute(
        self, instructions: str, input_data: Any, schema: type[T], previous_response_id: str | None = None
    ) -> AdapterResponse[T]:
        """Ask for a ``schema`` instance; ``instructions`` go in the request's ``instructions`` field.

        Retries (429, 5xx, timeouts) happen inside; the LLMError raised means they were exhausted
        (its message says after how many attempts).
        """
        options = dict(self.options)
        options["provider_options"] = {**options["provider_options"], "instructions": instructions}
        pending = Pending(self._params(instructions, input_data, schema, previous_response_id))
        token = pending_call.set(pending)
        try:
            response: Response = await self.llmplex_client.acomplete(
                self.model,
                input_text(input_data),
                output=schema,
                previous_response_id=previous_response_id,
                throttle=self.throttle,
                **options,
            )
        except LLMError as error:
            if isinstance(error, (LLMRateLimitError, LLMTimeoutError)):
                kind = "Rate limit" if isinstance(error, LLMRateLimitError) else "Timeout"
                error.args = (f"{kind} after {error.attempts} attempts: {error.message}",)
                error.message = error.args[0]
            converted = as_util_llm(error)
            if converted is error:
                raise
            raise converted from error.__cause__
        finally:
            pending_call.reset(token)
        if pending.answered:
            return adapter_response(pending.answer)
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
        """Delete a stored response (an evicted chain link) with ``client.responses.delete``: ``True`` when
        deleted, ``False`` when not (failures are logged, never raised)."""
        try:
            answer = self.client.responses.delete(response_id)
            if inspect.isawaitable(answer):
                await answer
        except Exception as error:  # util_llm: a failed deletion is logged, never raised
            logger.warning("could not delete response %s: %s", response_id, type(error).__name__)
            return False
        return True

    def _parse_reset_ms(self, headers: Any) -> float:
        """util_llm's wait for a 429: ``x-ratelimit-reset-tokens`` (``"100ms"``, ``"1.5s"``, bare ms) plus 0.5 s.

        llmplex's retry loop reads the provider's wait itself; this stays for code that calls it.
        """
        return parse_reset_ms(headers)
