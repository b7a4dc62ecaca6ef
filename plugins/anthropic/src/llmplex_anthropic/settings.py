"""The settings of an Anthropic provider instance."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from llmplex.provider import ProviderSettings

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicSettings", "StructuredOutputMode"]

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` sent when a request sets none: the Messages API requires the field."""

StructuredOutputMode = Literal["auto", "native", "tool"]


class AnthropicSettings(ProviderSettings):
    """``[providers.anthropic]``: key, endpoint, timeout and defaults.

    ``api_key`` comes from ``ANTHROPIC_API_KEY`` for the ``anthropic`` prefix.
    An instance with a ``base_url`` (a local Messages-compatible server) works
    without a key.
    """

    env_vars = {"api_key": ("ANTHROPIC_API_KEY",)}

    api_key: SecretStr | None = None
    base_url: str | None = Field(default=None, description="Another Messages-compatible endpoint.")
    timeout: float | None = Field(default=None, gt=0, description="Seconds per call unless the deadline is sooner.")
    default_max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, gt=0, description="max_tokens when a request has none.")
    batch_max_requests: int = Field(default=100_000, gt=0, description="Requests per Message Batch (API: 100,000).")
    batch_max_bytes: int = Field(default=256_000_000, gt=0, description="Bytes per Message Batch (Anthropic: 256 MB).")
    structured_output: StructuredOutputMode = Field(
        default="auto",
        description="native: output_config.format; tool: a forced tool; auto: native unless the model lacks it.",
    )

    def problems(self) -> list[str]:
        """A missing key, unless the instance points at its own server."""
        if self.api_key is None and self.base_url is None:
            return ["no API key: set ANTHROPIC_API_KEY, or api_key in the provider's config table"]
        return []
