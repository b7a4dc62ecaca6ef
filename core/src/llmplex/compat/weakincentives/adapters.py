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
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from llmplex.compat.weakincentives.config import (
    LiteLLMClientConfig,
    LiteLLMModelConfig,
    OpenAIClientConfig,
    OpenAIModelConfig,
)
from llmplex.compat.weakincentives.errors import InvalidValueError
from llmplex.compat.weakincentives.evaluation import CallPlan, PromptResponse, evaluate_prompt
from llmplex.compat.weakincentives.throttle import ThrottlePolicy
from llmplex.errors import LLMConfigurationError

if TYPE_CHECKING:
    from llmplex.client import Client
    from llmplex.compat.weakincentives.budget import Budget, BudgetTracker, Deadline
    from llmplex.compat.weakincentives.prompt import Prompt
    from llmplex.compat.weakincentives.session import Session

__all__ = ["LITELLM_ADAPTER_NAME", "OPENAI_ADAPTER_NAME", "LiteLLMAdapter", "OpenAIAdapter", "ProviderAdapter"]

OPENAI_ADAPTER_NAME: Final = "openai"
LITELLM_ADAPTER_NAME: Final = "litellm"

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
        return evaluate_prompt(self.plan, self, prompt, session, deadline, budget, budget_tracker)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.plan.model!r})"


def _client(client: Any, provider: str, settings: Mapping[str, Any]) -> Client:
    from llmplex.client import Client

    if client is None:
        return Client(providers={provider: dict(settings)})
    if isinstance(client, Client):
        return client
    raise LLMConfigurationError(
        f"client must be an llmplex.Client (llmplex makes its own SDK clients), got {type(client).__name__}; "
        "give the key and endpoint in the client config instead"
    )


def _throttle(policy: ThrottlePolicy | None) -> Any:
    if policy is None:
        return None
    if not isinstance(policy, ThrottlePolicy):
        raise LLMConfigurationError(f"throttle_policy must come from new_throttle_policy(...), got {policy!r}")
    return policy.engine_policy()


class OpenAIAdapter(_LLMplexAdapter):
    """Evaluates prompts on OpenAI's Responses API (llmplex's ``openai`` provider).

    ``client_config`` supplies the key and endpoint (unset: ``OPENAI_API_KEY``,
    ``OPENAI_BASE_URL``); ``client`` may be an ``llmplex.Client`` to use
    instead. ``throttle_policy`` replaces the configured retry policy.
    ``use_native_response_format=False`` asks for structured output through
    instructions in the prompt instead of the API's JSON schema format.
    """

    def __init__(
        self,
        *,
        model: str,
        model_config: OpenAIModelConfig | None = None,
        tool_choice: Any = "auto",
        client: Any = None,
        client_config: OpenAIClientConfig | None = None,
        throttle_policy: ThrottlePolicy | None = None,
        use_native_response_format: bool = True,
    ) -> None:
        if client is not None and client_config is not None:
            raise InvalidValueError("client_config cannot be provided when an explicit client is supplied.")
        settings = (client_config or OpenAIClientConfig()).provider_settings()
        config = model_config or OpenAIModelConfig()
        self.plan = CallPlan(
            adapter_name=OPENAI_ADAPTER_NAME,
            client=_client(client, "openai", settings),
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
    go to every ``litellm.completion`` call. A ``completion`` callable or
    ``completion_factory`` cannot be used: llmplex calls LiteLLM itself.
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
        if completion is not None or completion_factory is not None:
            raise LLMConfigurationError(
                "LiteLLMAdapter(completion=...) and completion_factory=... are not supported: llmplex calls LiteLLM "
                "itself; pass api_key / api_base in LiteLLMClientConfig and extra arguments in completion_kwargs"
            )
        connection = completion_config or LiteLLMClientConfig()
        settings = connection.provider_settings()
        if completion_kwargs:
            settings["completion_kwargs"] = dict(completion_kwargs)
        config = model_config or LiteLLMModelConfig()
        self.plan = CallPlan(
            adapter_name=LITELLM_ADAPTER_NAME,
            client=_client(client, "litellm", settings),
            model=f"litellm:{model}",
            options=config.call_options(),
            provider_options=config.provider_options(),
            tool_choice=tool_choice,
            throttle=_throttle(throttle_policy),
            timeout=connection.timeout,
        )
