"""Resolve ``"provider:model"`` (or an alias, or a model group's name) to where requests go."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

from llmplex.config.loader import Origins, validate_settings
from llmplex.config.schema import DROP_KEY, LIMIT_KEYS, Config, reveal_secrets
from llmplex.errors import LLMConfigurationError
from llmplex.plugins.host import PluginHost
from llmplex.provider import ProviderInfo, ProviderSettings
from llmplex.reliability.clock import Clock
from llmplex.routing.group_table import GroupTable
from llmplex.routing.groups import Group, Route
from llmplex.routing.instances import KNOWN_DISTRIBUTIONS, MAX_CACHED_ROUTES, ProviderInstance

__all__ = ["Router"]

_INSTANCE_KEYS = frozenset({"plugin", DROP_KEY, *LIMIT_KEYS})
"""Keys of a provider table that core reads itself; the plugin's settings never see them."""
_MAX_ALIAS_DEPTH = 8


class Router:
    """Turns model strings into routes, creating provider instances on first use."""

    def __init__(
        self,
        config: Config,
        origins: Origins,
        host: PluginHost,
        environ: Mapping[str, str] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.config = config
        self.origins = origins
        self.host = host
        self._environ = os.environ if environ is None else environ
        self._instances: dict[str, ProviderInstance] = {}
        self._routes: dict[str, Route] = {}
        self._lock = threading.RLock()
        self.groups = GroupTable(config, host, clock or Clock(), self._expand_alias, self._installed)

    def group(self, name: str) -> Group:
        """The model group ``name`` (a ``[groups.NAME]`` table), built on first use."""
        return self.groups.group(name, self.resolve)

    def resolve(self, model: str) -> Route:
        """Route ``model`` (``"prefix:name"``, an alias, or a bare name for the default provider)."""
        route = self._routes.get(model) if isinstance(model, str) else None
        if route is None:
            route = self._resolve(model)
            if len(self._routes) < MAX_CACHED_ROUTES:
                self._routes[model] = route
        return route

    def is_cached(self, model: str) -> bool:
        """Whether ``model`` was resolved before (resolving it again loads nothing)."""
        return isinstance(model, str) and model in self._routes

    def _resolve(self, model: str) -> Route:
        spec = self._expand_alias(model)
        if spec in self.groups:
            group = self.group(spec)
            first = self.resolve(group.deployments[0].spec)
            return Route(first.provider, first.model, group)
        prefix, sep, name = spec.partition(":")
        if not sep:
            if not self.config.default_provider:
                raise LLMConfigurationError(
                    f"model {spec!r} has no provider prefix: write it as 'provider:{spec}' "
                    f"(installed: {self._installed()}), define an alias, or set default_provider"
                )
            prefix, name = self.config.default_provider, spec
        if prefix and not name:
            return self._default_route(spec, prefix)
        if not prefix or not name:
            raise LLMConfigurationError(
                f"model {spec!r} must be 'provider:model' with both parts, e.g. 'openai:gpt-4o-mini'"
            )
        instance = self.instance(prefix)
        return Route(instance, instance.info.model_aliases.get(name, name))

    def _default_route(self, spec: str, prefix: str) -> Route:
        """``"prefix:"`` alone: the provider's default model (its documented one, or what its settings choose)."""
        instance = self.instance(prefix)
        name = instance.settings.preferred_model(instance.info.default_model)
        if not name:
            raise LLMConfigurationError(
                f"model {spec!r} names only the provider, and {prefix!r} has no default model: "
                f"write it as '{prefix}:<model>'"
            )
        return Route(instance, instance.info.model_aliases.get(name, name))

    def _expand_alias(self, model: str) -> str:
        if not isinstance(model, str) or not model.strip():
            raise LLMConfigurationError(f"model must be a non-empty string like 'openai:gpt-4o-mini', got {model!r}")
        seen = [model.strip()]
        while seen[-1] in self.config.aliases:
            seen.append(self.config.aliases[seen[-1]])
            if len(seen) > _MAX_ALIAS_DEPTH or seen[-1] in seen[:-1]:
                raise LLMConfigurationError(f"aliases form a loop: {' -> '.join(seen)}")
        return seen[-1]

    def instance(self, prefix: str) -> ProviderInstance:
        """The provider instance serving ``prefix``, created on first use."""
        found = self._instances.get(prefix)
        if found is not None:
            return found
        with self._lock:
            if prefix not in self._instances:
                self._instances[prefix] = self._create(prefix)
            return self._instances[prefix]

    def instances(self) -> list[ProviderInstance]:
        """The provider instances created so far."""
        with self._lock:
            return list(self._instances.values())

    def _create(self, prefix: str) -> ProviderInstance:
        reason = self.config.is_enabled(prefix)
        if reason:
            raise LLMConfigurationError(f"{reason}; enable it in config to use it")
        plugin_name = self.config.plugin_of(prefix)
        if plugin_name not in self.host.entries():
            raise self._unknown(prefix, plugin_name)
        plugin = self.host.load(plugin_name)
        info = plugin.providers[plugin_name]
        settings = self._settings(prefix, info)
        return ProviderInstance(prefix, plugin, info, settings, self.host, self.config.drops_unsupported(prefix))

    def _settings(self, prefix: str, info: ProviderInfo) -> ProviderSettings:
        table = reveal_secrets(self.config.providers.get(prefix, {}))
        for key in _INSTANCE_KEYS:
            table.pop(key, None)
        if prefix == info.name:
            for field_name, env_names in info.settings_model.env_vars.items():
                if field_name in table:
                    continue
                for env_name in env_names:
                    if self._environ.get(env_name):
                        table[field_name] = self._environ[env_name]
                        self.origins.record(("providers", prefix, field_name), f"environment variable {env_name}")
                        break
        settings = validate_settings(info.settings_model, table, self.origins, ("providers", prefix))
        assert isinstance(settings, ProviderSettings)
        settings.register_secrets()
        return settings

    def _installed(self) -> str:
        names = sorted(set(self.host.entries()) | set(self.config.providers))
        return ", ".join(names) or "none"

    def _unknown(self, prefix: str, plugin_name: str) -> LLMConfigurationError:
        what = f"provider {prefix!r}" if prefix == plugin_name else f"plugin {plugin_name!r} (for provider {prefix!r})"
        hint = ""
        if plugin_name in KNOWN_DISTRIBUTIONS:
            distribution = KNOWN_DISTRIBUTIONS[plugin_name]
            folder = distribution.removeprefix("llmplex-").replace("-", "_")
            hint = (
                f"; install its distribution {distribution}: in a clone of the llmplex repository, "
                f"pip install ./plugins/{folder}"
            )
        return LLMConfigurationError(f"unknown {what}; installed providers: {self._installed()}{hint}")
