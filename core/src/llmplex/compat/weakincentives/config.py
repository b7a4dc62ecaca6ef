"""weakincentives' adapter configuration dataclasses, read into llmplex provider settings and call options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from llmplex.compat.weakincentives.errors import InvalidValueError

__all__ = [
    "LLMConfig",
    "LiteLLMClientConfig",
    "LiteLLMModelConfig",
    "OpenAIClientConfig",
    "OpenAIModelConfig",
    "merge_config_params",
]

_SAMPLING = ("temperature", "max_tokens", "top_p", "presence_penalty", "frequency_penalty", "stop", "seed")


@dataclass(frozen=True)
class LLMConfig:
    """Sampling options every provider takes; only those set reach the wire."""

    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    stop: tuple[str, ...] | None = None
    seed: int | None = None

    def to_request_params(self) -> dict[str, Any]:
        """The options that are set, by their request names."""
        params = {name: getattr(self, name) for name in _SAMPLING if getattr(self, name) is not None}
        if "stop" in params:
            params["stop"] = list(params["stop"])
        return params

    def call_options(self) -> dict[str, Any]:
        """The sampling options as keyword arguments of ``llmplex.Client.complete``."""
        return {name: getattr(self, name) for name in _SAMPLING if getattr(self, name) is not None}

    def provider_options(self) -> dict[str, Any]:
        """Provider-specific fields that are set, passed through to the payload."""
        base = {item.name for item in fields(LLMConfig)}
        return {
            item.name: getattr(self, item.name)
            for item in fields(self)
            if item.name not in base and getattr(self, item.name) is not None
        }


@dataclass(frozen=True)
class OpenAIClientConfig:
    """How to reach OpenAI: unset fields fall back to ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` / ``OPENAI_ORG_ID``.

    ``max_retries`` is accepted and not used: llmplex turns the SDK's retries off
    and retries in core, under the adapter's throttle policy.
    """

    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None
    organization: str | None = None
    timeout: float | None = None
    max_retries: int | None = None

    def to_client_kwargs(self) -> dict[str, Any]:
        """The fields that are set, as ``openai.OpenAI`` keyword arguments."""
        return {item.name: getattr(self, item.name) for item in fields(self) if getattr(self, item.name) is not None}

    def provider_settings(self) -> dict[str, Any]:
        """The settings of the llmplex ``openai`` provider these fields select (always the Responses API)."""
        settings: dict[str, Any] = {"api": "responses"}
        for name in ("api_key", "base_url", "organization", "timeout"):
            value = getattr(self, name)
            if value is not None:
                settings[name] = value
        return settings


@dataclass(frozen=True)
class OpenAIModelConfig(LLMConfig):
    """Responses API options; ``max_tokens`` is sent as ``max_output_tokens``.

    The Responses API takes no ``seed``, ``stop``, ``presence_penalty`` or
    ``frequency_penalty``: setting one raises at construction.
    """

    logprobs: bool | None = None
    top_logprobs: int | None = None
    parallel_tool_calls: bool | None = True
    store: bool | None = None
    user: str | None = None

    def __post_init__(self) -> None:
        refused = sorted(
            name
            for name in ("seed", "stop", "presence_penalty", "frequency_penalty")
            if getattr(self, name) is not None
        )
        if refused:
            raise InvalidValueError(
                f"Unsupported OpenAI Responses parameters: {', '.join(refused)}. Remove them from OpenAIModelConfig."
            )

    def to_request_params(self) -> dict[str, Any]:
        """The options that are set, by their Responses API names."""
        params = super().to_request_params()
        if "max_tokens" in params:
            params["max_output_tokens"] = params.pop("max_tokens")
        return {**params, **self.provider_options()}


@dataclass(frozen=True)
class LiteLLMClientConfig:
    """How LiteLLM reaches the provider; unset fields use LiteLLM's own environment variables.

    ``timeout`` bounds each ``evaluate`` call as a whole (llmplex's deadline);
    ``num_retries`` is accepted and not used: llmplex retries in core.
    """

    api_key: str | None = field(default=None, repr=False)
    api_base: str | None = None
    timeout: float | None = None
    num_retries: int | None = None

    def to_completion_kwargs(self) -> dict[str, Any]:
        """The fields that are set, as ``litellm.completion`` keyword arguments."""
        return {item.name: getattr(self, item.name) for item in fields(self) if getattr(self, item.name) is not None}

    def provider_settings(self) -> dict[str, Any]:
        """The settings of the llmplex ``litellm`` provider these fields select."""
        return {name: getattr(self, name) for name in ("api_key", "api_base") if getattr(self, name) is not None}


@dataclass(frozen=True)
class LiteLLMModelConfig(LLMConfig):
    """Sampling options plus LiteLLM's ``n`` and ``user``."""

    n: int | None = None
    user: str | None = None

    def to_request_params(self) -> dict[str, Any]:
        """The options that are set, by their request names."""
        return {**super().to_request_params(), **self.provider_options()}


def merge_config_params(base: Mapping[str, Any], config: LLMConfig | None) -> dict[str, Any]:
    """``base`` with ``config``'s request parameters on top (the config wins)."""
    return {**base, **(config.to_request_params() if config is not None else {})}
