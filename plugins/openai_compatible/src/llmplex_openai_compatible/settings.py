"""Settings of an OpenAI-compatible provider instance: one model per preset, built from the preset table."""

from __future__ import annotations

import dataclasses
import os
from typing import Any, ClassVar

from llmplex_openai.settings import is_local_url
from pydantic import Field, SecretStr, field_validator, model_validator

from llmplex.provider import Capabilities, ProviderSettings
from llmplex_openai_compatible.presets import ALL_OPTIONS, GENERIC, PRESETS, Preset, ToolCallIds

__all__ = ["SETTINGS_MODELS", "CompatibleSettings", "OpenRouterSettings"]


class CompatibleSettings(ProviderSettings):
    """How to reach one OpenAI-compatible provider, and the differences of its API.

    Attributes:
        api_key: the API key (the preset's own prefix reads the preset's variable, ``MISTRAL_API_KEY`` ...).
        api_key_env: the environment variable holding the key, for an instance declared in config.
        base_url: the API root (default: the preset's).
        timeout: upper bound of one HTTP request in seconds (the call's deadline may shorten it).
        headers: extra HTTP headers sent with every request.
        unsupported_options: core options this API does not take, besides the preset's (refused by name).
        refused_fields: request fields (``provider_options``) this API answers 400 for, besides the preset's.
        tool_call_ids: ``"alnum9"`` when the API takes only 9-character alphanumeric tool-call ids.
    """

    preset: ClassVar[Preset] = GENERIC

    api_key: SecretStr | None = None
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    base_url: str | None = Field(default=None, pattern=r"^https?://")
    timeout: float | None = Field(default=None, gt=0)
    headers: dict[str, str] = Field(default_factory=dict)
    unsupported_options: frozenset[str] = frozenset()
    refused_fields: frozenset[str] = frozenset()
    tool_call_ids: ToolCallIds | None = None

    @model_validator(mode="before")
    @classmethod
    def _key_from_named_variable(cls, data: Any) -> Any:
        """``api_key_env = "NAME"`` reads the key from ``$NAME`` when ``api_key`` is not given."""
        if isinstance(data, dict) and data.get("api_key") is None and isinstance(data.get("api_key_env"), str):
            value = os.environ.get(data["api_key_env"])
            if value:
                return {**data, "api_key": value}
        return data

    @field_validator("unsupported_options")
    @classmethod
    def _known_options(cls, value: frozenset[str]) -> frozenset[str]:
        unknown = sorted(value - ALL_OPTIONS)
        if unknown:
            raise ValueError(
                f"unknown option(s) {', '.join(unknown)}; the options are {', '.join(sorted(ALL_OPTIONS))}"
            )
        return value

    @property
    def url(self) -> str:
        """The API root requests go to."""
        return self.base_url or self.preset.base_url

    @property
    def key_variable(self) -> str | None:
        """The variable the key is read from, as a message should name it."""
        return self.api_key_env or self.preset.key_env

    @property
    def id_format(self) -> ToolCallIds:
        """The tool-call id format the API accepts."""
        return self.tool_call_ids or self.preset.tool_call_ids

    def refused(self, model: str) -> frozenset[str]:
        """Core options refused for ``model``: the preset's, its model family's, and ``unsupported_options``."""
        family = {o for prefix, opts in self.preset.model_refusals.items() if model.startswith(prefix) for o in opts}
        return (ALL_OPTIONS - self.preset.options) | family | self.unsupported_options

    def capabilities(self, declared: Capabilities) -> Capabilities:
        """The preset's capabilities, narrowed by ``unsupported_options``."""
        options = self.preset.options - self.unsupported_options
        return dataclasses.replace(declared, sampling_options=None if options == ALL_OPTIONS else options)

    def missing_key(self) -> str | None:
        """Why the instance cannot be used yet (no key for a remote server), naming the variable; else ``None``."""
        if self.api_key is not None or is_local_url(self.url):
            return None
        if not self.url:
            return (
                f"{self.preset.title} has no base_url: set base_url (and api_key or api_key_env) in its "
                "[providers.NAME] table"
            )
        variable = self.key_variable
        where = f"set {variable}, or api_key" if variable else "set api_key (or api_key_env naming its variable)"
        return f"no API key for {self.preset.title} ({self.url}): {where} in its [providers.NAME] table"

    def problems(self) -> list[str]:
        """A missing key (or, for ``openai-compatible``, a missing ``base_url``)."""
        missing = self.missing_key()
        return [missing] if missing else []


class OpenRouterSettings(CompatibleSettings):
    """OpenRouter's settings: app attribution headers and provider routing besides the common ones.

    Attributes:
        app_url: sent as ``HTTP-Referer`` (your app's URL, for OpenRouter's rankings).
        app_title: sent as ``X-Title``.
        provider_routing: OpenRouter's ``provider`` object (``order``, ``allow_fallbacks``, ``only``, ``sort``, ...),
            sent with every request.
    """

    app_url: str | None = Field(default=None, pattern=r"^https?://")
    app_title: str | None = None
    provider_routing: dict[str, Any] = Field(default_factory=dict)


def _model(preset: Preset) -> type[CompatibleSettings]:
    base = OpenRouterSettings if preset.name == "openrouter" else CompatibleSettings
    env_vars = {"api_key": (preset.key_env,)} if preset.key_env else {}
    namespace = {"preset": preset, "env_vars": env_vars, "__module__": __name__, "__doc__": base.__doc__}
    return type(f"{preset.name.title()}Settings", (base,), namespace)


SETTINGS_MODELS: dict[str, type[CompatibleSettings]] = {name: _model(p) for name, p in PRESETS.items()}
SETTINGS_MODELS[GENERIC.name] = CompatibleSettings
"""The settings model of each provider by prefix."""
