"""weakincentives' ``ProviderAdapter`` and its OpenAI and LiteLLM adapters, routed through llmplex providers.

``OpenAIAdapter(model="gpt-4o")`` evaluates on llmplex's ``openai:gpt-4o``
(always the Responses API, whatever ``base_url``); ``LiteLLMAdapter(model=
"openai/gpt-4o")`` on ``litellm:openai/gpt-4o``. Each adapter owns an
``llmplex.Client`` built from the usual config files and environment with the
adapter's client config on top (or the ``client=`` you pass).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from llmplex.compat.weakincentives.config import (
    LiteLLMClientConfig,
    LiteLLMModelConfig,
    OpenAIClientConfig,
    OpenAIModelConfig,
)
from llmplex.compat.weakincentives.errors import InvalidValueError
from llmplex.compat.weakincentives.evaluation import CallPlan, PromptResponse, evaluate_prompt
from llmplex.compat.weakincentives.injection import InjectedCompletion, InjectedOpenAI, inject
from llmplex.compat.weakincentives.throttle import ThrottlePolicy
from llmplex.errors import LLMConfigurationError

if TYPE_CHECKING:
    from llmplex.client import Client
    from llmplex.compat.weakincentives.budget import Budget, BudgetTracker, Deadline
    from llmplex.compat.weakincentives.prompt import Prompt
    from llmplex.compat.weakincentives.session import Session

__all__ = [
    "LITELLM_ADAPTER_NAME",
    "OPENAI_ADAPTER_NAME",
    "AdapterName",
    "LiteLLMAdapter",
    "OpenAIAdapter",
    "ProviderAdapter",
]

AdapterName = str
"""An adapter's name, as telemetry events carry it."""
OPENAI_ADAPTER_NAME: Final[AdapterName] = "openai"
LITELLM_ADAPTER_NAME: Final[AdapterName] = "litellm"

ConfigT = TypeVar("ConfigT")
OutputT = TypeVar("OutputT")


class ProviderAdapter(ABC, Generic[ConfigT]):
    """Evaluates prompts against one provider: ``adapter.evaluate(prompt, session=session)``."""

    @abstractmethod
    def evaluate(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session,
        deadline: Deadline | None = None,
        budget: Budget | None = None,
        budget_tracker: BudgetTracker | None = None,
    ) -> PromptResponse[OutputT]:
        """Render ``prompt``, call the model (running its tools), and return the parsed answer.

        ``PromptRendered`` and ``PromptExecuted`` (and ``ToolInvoked`` per tool
        call) go to ``session.dispatcher``. An expired ``deadline`` raises
        ``DeadlineExceededError`` before anything is sent. ``budget`` gets a new
        tracker unless ``budget_tracker`` is given to share one.
        """


class _LLMplexAdapter(ProviderAdapter[Any]):
    """An adapter whose evaluations are llmplex calls described by a ``CallPlan``."""

    plan: CallPlan

    def evaluate(
        self,
        prompt: Prompt[OutputT],
        *,
        session: Session,
        deadline: Deadline | None = None,
        budget: Budget | None = None,
        budget_tracker: BudgetTracker | None = None,
    ) -> PromptResponse[OutputT]:
        """See ``ProviderAdapter.evaluate``."""
        result: PromptResponse[OutputT] = evaluate_prompt(
            self.plan, self, prompt, session, deadline, budget, budget_tracker
        )
        return result

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.plan.model!r})"


def _client(client: Any, provider: str, settings: Mapping[str, Any], injected: Any = None) -> Client:
    """The adapter's llmplex client: ``client`` when it is one, else a new one (sending through ``injected``)."""
    from llmplex.client import Client

    if client is not None:
        given: Client = client
        return given
    built = Client(providers={provider: dict(settings)})
    if injected is not None:
        inject(built, provider, injected)
    return built


def _exclusive(given: str, others: Mapping[str, Any]) -> None:
    clash = [name for name, value in others.items() if value is not None]
    if clash:
        raise InvalidValueError(f"{' and '.join(clash)} cannot be provided when an explicit {given} is supplied.")


def _openai_client(
    client: Any, factory: Callable[..., Any] | None, kwargs: Mapping[str, Any] | None, config: OpenAIClientConfig | None
) -> tuple[Any, Any, OpenAIClientConfig | None]:
    """``(llmplex client, injected SDK client, connection config)`` from the adapter's client arguments."""
    from llmplex.client import Client

    if client is not None:
        _exclusive("client", {"client_config": config, "client_factory": factory, "client_kwargs": kwargs})
        return (client, None, None) if isinstance(client, Client) else (None, InjectedOpenAI(client), None)
    if factory is not None:
        made = factory(**{**(config.to_client_kwargs() if config else {}), **(kwargs or {})})
        return (made, None, config) if isinstance(made, Client) else (None, InjectedOpenAI(made), config)
    if kwargs:
        unknown = sorted(set(kwargs) - {f.name for f in fields(OpenAIClientConfig)})
        if unknown:
            raise InvalidValueError(
                f"client_kwargs {unknown} are not settings llmplex's openai provider takes; "
                f"use {[f.name for f in fields(OpenAIClientConfig)]}, or pass client_factory= to build your own client"
            )
        config = replace(config or OpenAIClientConfig(), **kwargs)
    return None, None, config


def _throttle(policy: ThrottlePolicy | None) -> Any:
    if policy is None:
        return None
    if not isinstance(policy, ThrottlePolicy):
        raise LLMConfigurationError(f"throttle_policy must come from new_throttle_policy(...), got {policy!r}")
    return policy.engine_policy()


class OpenAIAdapter(_LLMplexAdapter):
    """Evaluates prompts on OpenAI's Responses API (llmplex's ``openai`` provider).

    ``client_config`` (or ``client_kwargs``) supplies the key and endpoint
    (unset: ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``). ``client`` is a client of
    your own, called as ``client.responses.create(**request)`` for every request
    (a test's fake, a configured ``openai.OpenAI``), or an ``llmplex.Client``;
    ``client_factory(**client_kwargs)`` builds one. llmplex's retries, deadline,
    budget and events wrap each call either way. ``throttle_policy`` replaces the
    configured retry policy. ``use_native_response_format=False`` asks for
    structured output through instructions instead of the API's JSON schema format.
    """

    def __init__(
        self,
        *,
        model: str,
        model_config: OpenAIModelConfig | None = None,
        tool_choice: Any = "auto",
        client: Any = None,
        client_config: OpenAIClientConfig | None = None,
        client_factory: Callable[..., Any] | None = None,
        client_kwargs: Mapping[str, Any] | None = None,
        throttle_policy: ThrottlePolicy | None = None,
        use_native_response_format: bool = True,
    ) -> None:
        own, injected, connection = _openai_client(client, client_factory, client_kwargs, client_config)
        settings = (connection or OpenAIClientConfig()).provider_settings()
        if injected is not None:
            settings.setdefault("api_key", "llmplex-injected-client")  # never sent: the injected client sends
        config = model_config or OpenAIModelConfig()
        self.plan = CallPlan(
            adapter_name=OPENAI_ADAPTER_NAME,
            client=_client(own, "openai", settings, injected),
            model=f"openai:{model}",
            options=config.call_options()
            if use_native_response_format
            else {**config.call_options(), "output_strategy": "prompt"},
            provider_options=config.provider_options(),
            tool_choice=tool_choice,
            throttle=_throttle(throttle_policy),
        )


class LiteLLMAdapter(_LLMplexAdapter):
    """Evaluates prompts through LiteLLM (llmplex's ``litellm`` provider): ``model="anthropic/claude-3-opus"``.

    ``completion_config`` supplies ``api_key`` / ``api_base``; ``completion_kwargs``
    go to every ``litellm.completion`` call. ``completion`` is a callable of your
    own, called as ``completion(**request)`` instead of ``litellm.completion``;
    ``completion_factory(**completion_config fields, **completion_kwargs)`` builds
    one. llmplex's retries, deadline, budget and events wrap each call either way.
    """

    def __init__(
        self,
        *,
        model: str,
        tool_choice: Any = "auto",
        completion: Callable[..., Any] | None = None,
        completion_factory: Callable[..., Any] | None = None,
        completion_kwargs: Mapping[str, Any] | None = None,
        completion_config: LiteLLMClientConfig | None = None,
        model_config: LiteLLMModelConfig | None = None,
        client: Any = None,
        throttle_policy: ThrottlePolicy | None = None,
    ) -> None:
        if completion is not None:
            _exclusive("completion", {"completion_factory": completion_factory, "completion_kwargs": completion_kwargs})
            _exclusive("completion", {"completion_config": completion_config})
        elif completion_factory is not None:
            made = (completion_config.to_completion_kwargs() if completion_config else {}) | dict(
                completion_kwargs or {}
            )
            completion = completion_factory(**made)
        connection = completion_config or LiteLLMClientConfig()
        settings = connection.provider_settings()
        if completion_kwargs and completion is None:
            settings["completion_kwargs"] = dict(completion_kwargs)
        injected = None if completion is None else InjectedCompletion(completion)
        config = model_config or LiteLLMModelConfig()
        self.plan = CallPlan(
            adapter_name=LITELLM_ADAPTER_NAME,
            client=_client(client, "litellm", settings, injected),
            model=f"litellm:{model}",
            options=config.call_options(),
            provider_options=config.provider_options(),
            tool_choice=tool_choice,
            throttle=_throttle(throttle_policy),
            timeout=connection.timeout,
        )
