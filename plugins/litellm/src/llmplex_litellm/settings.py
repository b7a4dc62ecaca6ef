"""Settings of the ``litellm`` provider."""

from __future__ import annotations

from typing import Any

from pydantic import Field, SecretStr, field_validator

from llmplex.provider import ProviderSettings

__all__ = ["RESERVED_KWARGS", "LiteLLMSettings"]

RESERVED_KWARGS = frozenset(
    {"num_retries", "max_retries", "fallbacks", "context_window_fallback_dict", "timeout", "stream", "api_key"}
)
"""``litellm.completion`` arguments llmplex owns: retries and fallbacks run in core, deadlines set the timeout."""


class LiteLLMSettings(ProviderSettings):
    """How to reach LiteLLM's providers.

    LiteLLM reads each provider's own environment variables (``OPENAI_API_KEY``,
    ``ANTHROPIC_API_KEY``, ...); set ``api_key`` / ``api_base`` to override them,
    e.g. for an OpenAI-compatible server: ``litellm:openai/<model>`` with
    ``api_base = "http://127.0.0.1:8080/v1"``.
    """

    api_key: SecretStr | None = None
    api_base: str | None = None
    completion_kwargs: dict[str, Any] = Field(
        default_factory=dict,
        description="Extra keyword arguments for every litellm.completion call (api_version, aws_region_name, ...).",
    )

    @field_validator("completion_kwargs")
    @classmethod
    def _no_reserved(cls, value: dict[str, Any]) -> dict[str, Any]:
        reserved = sorted(RESERVED_KWARGS & set(value))
        if reserved:
            raise ValueError(
                f"{', '.join(reserved)} cannot be set here: llmplex runs retries and fallbacks itself "
                "(throttle and fallbacks in config), sets the timeout from the deadline, and takes the key from api_key"
            )
        return value

    def problems(self) -> list[str]:
        """Missing pieces: only a missing ``litellm`` package (LiteLLM finds provider keys itself)."""
        from importlib.util import find_spec

        return [] if find_spec("litellm") else ["the litellm package is not installed: pip install llmplex-litellm"]
