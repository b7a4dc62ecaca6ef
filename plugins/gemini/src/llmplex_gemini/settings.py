"""The settings of a Gemini provider instance."""

from __future__ import annotations

from pydantic import Field, SecretStr

from llmplex.provider import ProviderSettings

__all__ = ["GeminiSettings"]


class GeminiSettings(ProviderSettings):
    """``[providers.gemini]``: key, endpoint, timeout, default model and an optional model override.

    ``api_key`` comes from ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``, and
    ``default_model`` from ``GEMINI_MODEL``, for the ``gemini`` prefix. An
    instance with a ``base_url`` works without a key.
    """

    env_vars = {"api_key": ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "default_model": ("GEMINI_MODEL",)}

    api_key: SecretStr | None = None
    base_url: str | None = Field(default=None, description="Another endpoint speaking the Gemini API.")
    timeout: float | None = Field(default=None, gt=0, description="Seconds per call unless the deadline is sooner.")
    model: str | None = Field(default=None, description="When set, every request of this instance uses this model.")
    default_model: str | None = Field(
        default=None, description="The model of a request naming only the prefix ('gemini:'); unset: gemini-2.5-flash."
    )

    def preferred_model(self, declared: str | None) -> str | None:
        """``default_model`` (``GEMINI_MODEL``) when set, else the plugin's documented default."""
        return self.default_model or declared

    def problems(self) -> list[str]:
        """A missing key, unless the instance points at its own server."""
        if self.api_key is None and self.base_url is None:
            return ["no API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or api_key in the provider's config table"]
        return []
