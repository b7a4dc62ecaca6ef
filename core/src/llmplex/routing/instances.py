"""Provider instances: one usable prefix with its plugin, settings and SDK clients."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llmplex.plugins.hooks import ProviderHooks
from llmplex.plugins.host import LoadedPlugin, PluginHost
from llmplex.plugins.sdk_clients import SDKClients
from llmplex.provider import Capabilities, ProviderInfo, ProviderSettings

__all__ = ["KNOWN_DISTRIBUTIONS", "MAX_CACHED_ROUTES", "ProviderInstance"]

KNOWN_DISTRIBUTIONS = {
    "openai": "llmplex-openai",
    "anthropic": "llmplex-anthropic",
    "gemini": "llmplex-gemini",
    "litellm": "llmplex-litellm",
    "claude-code": "llmplex-claude-code",
    "llamacpp": "llmplex-llamacpp",
    **dict.fromkeys(
        ("mistral", "groq", "deepseek", "openrouter", "xai", "together", "fireworks", "ollama", "vllm", "lmstudio"),
        "llmplex-openai-compatible",
    ),
    "openai-compatible": "llmplex-openai-compatible",
    "azure": "llmplex-azure",
}
MAX_CACHED_ROUTES = 1024
"""How many routes (and models' capabilities) are kept before the cache starts over."""


@dataclass
class ProviderInstance:
    """One usable prefix: a plugin's provider with its own settings and SDK clients."""

    name: str
    plugin: LoadedPlugin
    info: ProviderInfo
    settings: ProviderSettings
    host: PluginHost = field(repr=False)
    drop_unsupported: bool = False
    clients: SDKClients = field(init=False, repr=False)
    _capabilities: dict[str, Capabilities] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.clients = SDKClients(self.info, self.settings)

    @property
    def capabilities(self) -> Capabilities:
        """What this instance supports (the plugin's declaration as its settings narrow it)."""
        return self.settings.capabilities(self.info.capabilities)

    def capabilities_for(self, model: str) -> Capabilities:
        """What this instance supports for ``model`` (``capabilities`` unless the plugin's families differ).

        Worked out once per model (settings do not change under an instance) and kept for the next call.
        """
        found = self._capabilities.get(model)
        if found is None:
            found = self.settings.model_capabilities(self.info.capabilities, model)
            if len(self._capabilities) >= MAX_CACHED_ROUTES:
                self._capabilities.clear()
            self._capabilities[model] = found
        return found

    @property
    def hooks(self) -> ProviderHooks:
        """The plugin's pipeline hooks, rebound whenever the set of loaded plugins changes."""
        return self.host.hooks(self.plugin.entry.name)

    def client(self, asynchronous: bool) -> Any:
        """The SDK client for this instance, built on first use and reused (async: one per event loop)."""
        return self.clients.get(asynchronous)
