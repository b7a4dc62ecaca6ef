"""llm_connect's API (seed 000) on llmplex: change ``llm_connect`` imports to this module.

    from llmplex.compat.llm_connect import RunConfig, adapter_for

    adapter = adapter_for("openai:gpt-4o-mini")      # any llmplex model string
    response = adapter.execute_prompt("Say hi", RunConfig(max_tokens=200))
    print(response.content, response.usage["total_tokens"], response.metadata["provider"])

Every adapter here sends through llmplex's own engine (routing, config, retries,
deadline, budget, events); the errors are llmplex's, whose classes carry the
seed's names and attributes. ``RunConfig.max_depth`` and ``skip_if_exists``
belong to the application's pipeline and do not change a call.
"""

from __future__ import annotations

import asyncio
import copy
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import llmplex
from llmplex.compat._sampling import options_for
from llmplex.errors import (
    LLMAPIError,
    LLMBudgetExceededError,
    LLMConfigurationError,
    LLMError,
    LLMRateLimitError,
    LLMSubprocessError,
    LLMTimeoutError,
)
from llmplex.reliability.budget import Budget
from llmplex.reliability.budget import BudgetTracker as _CoreBudgetTracker
from llmplex.types import LLMConfig, Response

if TYPE_CHECKING:
    from llmplex.client import Client
    from llmplex.providers.mock import MockBackend

__all__ = [
    "BudgetTracker",
    "ClaudeCodeAdapter",
    "ErrorLLMAdapter",
    "LLMAPIError",
    "LLMAdapter",
    "LLMBudgetExceededError",
    "LLMConfigurationError",
    "LLMError",
    "LLMPlexAdapter",
    "LLMRateLimitError",
    "LLMResponse",
    "LLMSubprocessError",
    "LLMTimeoutError",
    "MockLLMAdapter",
    "RunConfig",
    "adapter_for",
]

_OPTION_NAMES = frozenset(LLMConfig.model_fields)


class BudgetTracker(_CoreBudgetTracker):
    """A thread-safe token budget shared by every call whose ``RunConfig.budget_tracker`` it is.

    ``BudgetTracker(max_tokens=10_000)`` caps total tokens; once they are spent,
    the next call raises ``LLMBudgetExceededError`` before anything is sent (a
    call already in flight finishes). ``budget=`` takes any llmplex ``Budget``.
    """

    def __init__(self, max_tokens: int | None = None, *, budget: Budget | None = None) -> None:
        if budget is not None and max_tokens is not None:
            raise LLMConfigurationError("give BudgetTracker either max_tokens or budget=, not both")
        super().__init__(budget or Budget(max_total_tokens=max_tokens))

    @property
    def used_tokens(self) -> int:
        """Total tokens recorded so far."""
        return self.snapshot().total_tokens

    @property
    def remaining_tokens(self) -> int | None:
        """Tokens left under the total cap (``None``: no cap)."""
        cap = self.budget.max_total_tokens
        return None if cap is None else max(cap - self.used_tokens, 0)


def _check_range(
    name: str, value: Any, low: float, *, strict: bool = False, high: float | None = None, whole: bool = False
) -> None:
    kinds = int if whole else (int, float)
    number = isinstance(value, kinds) and not isinstance(value, bool) and math.isfinite(value)
    if not number or value < low or (strict and value == low) or (high is not None and value > high):
        bound = f"> {low:g}" if strict else f">= {low:g}" + (f" and <= {high:g}" if high is not None else "")
        kind = "a whole number" if whole else "a finite number"
        raise LLMConfigurationError(f"RunConfig.{name} must be {kind} {bound}, got {value!r}")


@dataclass
class RunConfig:
    """How to run one prompt (the seed's fields, defaults and invariants, checked when built)."""

    model_name: str = "gpt-4"
    temperature: float = 0.7
    max_tokens: int = 2000
    model_params: dict[str, Any] = field(default_factory=dict)
    max_depth: int = 3
    skip_if_exists: bool = True
    timeout_seconds: int = 300
    budget_tracker: _CoreBudgetTracker | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model_name, str) or not self.model_name.strip():
            raise LLMConfigurationError(f"RunConfig.model_name must be a non-empty string, got {self.model_name!r}")
        _check_range("temperature", self.temperature, 0.0, high=2.0)
        _check_range("max_tokens", self.max_tokens, 0, strict=True, whole=True)
        _check_range("max_depth", self.max_depth, 0, whole=True)
        _check_range("timeout_seconds", self.timeout_seconds, 0, strict=True)
        if not isinstance(self.model_params, Mapping):
            raise LLMConfigurationError(
                f"RunConfig.model_params must be a dict, got {type(self.model_params).__name__}"
            )
        if self.budget_tracker is not None and not isinstance(self.budget_tracker, _CoreBudgetTracker):
            raise LLMConfigurationError("RunConfig.budget_tracker must be a BudgetTracker")


@dataclass
class LLMResponse:
    """One answer: ``content``, the ``model`` that answered, ``usage`` (prompt/completion/total tokens),
    ``finish_reason`` (``"stop"`` normally) and ``metadata`` (always ``"provider"`` when llmplex answered)."""

    content: str
    model: str
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    )
    finish_reason: str = "stop"
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_response(cls, response: Response) -> LLMResponse:
        """The seed's view of an llmplex ``Response``."""
        usage = response.usage
        return cls(
            content=response.text,
            model=response.model,
            usage={
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.total_tokens,
            },
            finish_reason=response.finish_reason,
            metadata={
                "provider": response.provider,
                "response_id": response.response_id,
                "attempts": response.attempts,
                "latency": response.latency,
            },
        )


class LLMAdapter(ABC):
    """The seed's adapter interface: ``execute_prompt`` and ``validate_config``, ``async_execute_prompt`` optional."""

    @abstractmethod
    def execute_prompt(self, prompt: str, config: RunConfig) -> LLMResponse:
        """Run ``prompt``; raise an ``LLMError`` subclass on any failure."""

    @abstractmethod
    def validate_config(self, config: RunConfig) -> bool:
        """Whether ``config`` can work with this adapter (advisory, side-effect free)."""

    async def async_execute_prompt(self, prompt: str, config: RunConfig) -> LLMResponse:
        """Async ``execute_prompt``; by default it runs ``execute_prompt`` in a worker thread."""
        return await asyncio.to_thread(self.execute_prompt, prompt, config)


class LLMPlexAdapter(LLMAdapter):
    """An adapter over one llmplex model string (``"openai:gpt-4o-mini"``, an alias, a config instance).

    The adapter's model wins over ``RunConfig.model_name``. Sampling options the
    provider cannot take (``temperature`` for claude-code) are left out;
    ``model_params`` entries named like llmplex options (``top_p``, ``stop``,
    ``seed``, ...) are options, the rest goes to the provider as ``provider_options``.
    """

    def __init__(self, model: str, *, client: Client | None = None) -> None:
        self.client = client if client is not None else llmplex.default_client()
        self.model = model
        self.route = self.client.route(model)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r})"

    def _call_args(self, config: RunConfig) -> dict[str, Any]:
        if not isinstance(config, RunConfig):
            raise LLMConfigurationError(f"config must be a RunConfig, got {type(config).__name__}")
        params = dict(config.model_params)
        options = {"temperature": config.temperature, "max_tokens": config.max_tokens}
        options.update({name: params.pop(name) for name in list(params) if name in _OPTION_NAMES})
        args: dict[str, Any] = {**options_for(self.route, options), "timeout": config.timeout_seconds}
        if params:
            args["provider_options"] = params
        if config.budget_tracker is not None:
            args["budget"] = config.budget_tracker
        return args

    def execute_prompt(self, prompt: str, config: RunConfig) -> LLMResponse:
        """Send ``prompt`` with ``config``'s options, deadline and budget."""
        args = self._call_args(config)
        return LLMResponse.from_response(self.client.complete(self.model, prompt, **args))

    async def async_execute_prompt(self, prompt: str, config: RunConfig) -> LLMResponse:
        """Natively async (no worker thread)."""
        args = self._call_args(config)
        return LLMResponse.from_response(await self.client.acomplete(self.model, prompt, **args))

    def validate_config(self, config: RunConfig) -> bool:
        """``True`` when ``config`` is a valid RunConfig and the provider has what it needs (e.g. a key)."""
        return isinstance(config, RunConfig) and not self.route.provider.settings.problems()


class ClaudeCodeAdapter(LLMPlexAdapter):
    """The Claude Code CLI (``claude -p``) through llmplex's ``claude-code`` provider.

    ``model`` is the CLI's model (``"sonnet"``, ``"haiku"``, ...); unset, the
    provider's default. ``RunConfig.temperature`` is left out (the CLI has no flag for it).
    """

    def __init__(self, model: str | None = None, *, client: Client | None = None) -> None:
        name = model or ""
        super().__init__(name if name.startswith("claude-code:") else f"claude-code:{name}", client=client)


class MockLLMAdapter(LLMPlexAdapter):
    """A deterministic adapter for tests, with no network I/O: llmplex's ``mock`` provider echoes the prompt.

    Counts calls (``call_count``), records ``last_prompt`` and ``last_config``;
    ``reset()`` clears them. ``backend`` is the mock's backend, to script answers.
    """

    def __init__(self) -> None:
        from llmplex.client import Client

        super().__init__("mock:echo", client=Client())
        self.reset()

    @property
    def backend(self) -> MockBackend:
        """The mock provider's backend of this adapter (``push``, ``push_error``, ``calls``)."""
        backend: MockBackend = self.client.provider_client("mock")
        return backend

    def reset(self) -> None:
        """Clear the counters, the recorded prompt and config, and the backend's script and calls."""
        self.call_count = 0
        self.last_prompt: str | None = None
        self.last_config: RunConfig | None = None
        self.backend.reset()

    def _record(self, prompt: str, config: RunConfig) -> None:
        self.call_count += 1
        self.last_prompt = prompt
        self.last_config = config

    def execute_prompt(self, prompt: str, config: RunConfig) -> LLMResponse:
        """Record the call, then answer (the echo of ``prompt``) through llmplex."""
        self._record(prompt, config)
        return super().execute_prompt(prompt, config)

    async def async_execute_prompt(self, prompt: str, config: RunConfig) -> LLMResponse:
        """Async twin of ``execute_prompt``."""
        self._record(prompt, config)
        return await super().async_execute_prompt(prompt, config)


class ErrorLLMAdapter(MockLLMAdapter):
    """A test adapter whose every call fails with ``error`` (default: an ``LLMAPIError`` with status 500).

    The failure travels through llmplex's engine once (no retries), so it comes
    out typed, with provider, model and attempts set.
    """

    def __init__(self, error: LLMError | None = None) -> None:
        super().__init__()
        self.error = error or LLMAPIError("simulated provider failure (ErrorLLMAdapter)", status_code=500)

    def _call_args(self, config: RunConfig) -> dict[str, Any]:
        failure = copy.copy(self.error)  # the engine fills in attempts and context: keep the template clean
        failure.context = dict(self.error.context)
        self.backend.push_error(failure)
        return {**super()._call_args(config), "throttle": {"max_attempts": 1}, "fallbacks": []}


def adapter_for(model: str) -> LLMAdapter:
    """An adapter over any llmplex model string: ``"openai:gpt-4o"``, ``"myinstance:some-model"``,
    ``"claude-code:sonnet"`` (a ``ClaudeCodeAdapter``), an alias; ``"gemini:"`` is the provider's default model.

    Raises ``LLMConfigurationError`` at once for an unknown or disabled provider.
    """
    client = llmplex.default_client()
    prefix = model.partition(":")[0] if isinstance(model, str) else ""
    if prefix and client.config.plugin_of(prefix) == "claude-code":
        return ClaudeCodeAdapter(model, client=client)
    return LLMPlexAdapter(model, client=client)
