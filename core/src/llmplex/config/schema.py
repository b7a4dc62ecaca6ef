"""The validated shape of llmplex configuration."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["DEFAULT_MODEL", "Config", "ThrottleConfig"]

DEFAULT_MODEL = "llamacpp:gemma3-270m"


class ThrottleConfig(BaseModel):
    """Retry policy for retryable failures (429, 5xx, timeouts, connection errors)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(default=5, ge=1, description="Attempts per model, the first included.")
    base_delay: float = Field(default=0.5, ge=0, description="Seconds; doubles each retry before jitter.")
    max_delay: float = Field(default=8.0, ge=0, description="Upper bound of one wait, in seconds.")
    max_total_delay: float = Field(default=30.0, ge=0, description="Upper bound of all waits together.")


class Config(BaseModel):
    """Everything llmplex reads from files, environment and keyword arguments.

    ``providers`` maps a prefix to its settings; a table with ``plugin = "openai"``
    declares a new instance of that plugin under its own prefix.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    default_model: str = DEFAULT_MODEL
    default_provider: str | None = None
    enabled: tuple[str, ...] | None = Field(default=None, description="Allow-list of prefixes; None allows all.")
    disabled: tuple[str, ...] = ()
    aliases: dict[str, str] = Field(default_factory=dict)
    fallbacks: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    providers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    throttle: ThrottleConfig = ThrottleConfig()
    timeout: float | None = Field(default=None, gt=0, description="Default per-request deadline in seconds.")

    @model_validator(mode="after")
    def _check_provider_tables(self) -> Config:
        for name, table in self.providers.items():
            plugin = table.get("plugin", name)
            if not isinstance(plugin, str) or not plugin:
                raise ValueError(f"providers.{name}.plugin must be a plugin name such as 'openai'")
        return self

    def is_enabled(self, prefix: str) -> str | None:
        """``None`` when ``prefix`` may be used, else the reason it may not."""
        if prefix in self.disabled:
            return f"provider {prefix!r} is disabled (listed in 'disabled' / LLMPLEX_DISABLED)"
        if self.enabled is not None and prefix not in self.enabled:
            return (
                f"provider {prefix!r} is not in the 'enabled' allow-list / LLMPLEX_ENABLED ({', '.join(self.enabled)})"
            )
        return None

    def plugin_of(self, prefix: str) -> str:
        """The plugin (entry-point name) that serves ``prefix``."""
        return str(self.providers.get(prefix, {}).get("plugin", prefix))
