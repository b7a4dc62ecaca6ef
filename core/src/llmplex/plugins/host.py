"""The plugin host: loads plugins lazily, validates them, and keeps failures contained."""

from __future__ import annotations

import importlib
import threading
import warnings
from collections.abc import Collection
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pluggy

from llmplex import hookspecs
from llmplex.errors import LLMConfigurationError
from llmplex.plugins import fallback_classifier
from llmplex.plugins.discovery import OBSERVER_GROUP, PROVIDER_GROUP, PluginEntry, list_entries
from llmplex.plugins.hooks import ProviderHooks, bind_provider_hooks
from llmplex.plugins.observers import ObserverGate
from llmplex.provider import ProviderInfo

__all__ = ["BrokenPlugin", "LoadedPlugin", "PluginHost", "PluginLoadWarning", "describe_failure"]


class PluginLoadWarning(UserWarning):
    """A plugin failed to load; the other providers keep working."""


def describe_failure(error: BaseException) -> str:
    """``Type: message`` for a plugin's failure; ``sys.exit(4)`` reads ``SystemExit: sys.exit(4)``."""
    if isinstance(error, SystemExit):
        return f"SystemExit: the plugin called sys.exit({error.code!r})"
    return f"{type(error).__name__}: {error}"


@dataclass(frozen=True)
class BrokenPlugin:
    """A plugin that could not be used, and why; ``retried``: its import failed (``ImportError``), which the next
    use tries again, as Python itself does (a concurrent import can hand back a partially initialized module)."""

    entry: PluginEntry
    error: str
    retried: bool = False


@dataclass
class LoadedPlugin:
    """A provider plugin module that loaded and registered its providers."""

    entry: PluginEntry
    module: ModuleType
    providers: dict[str, ProviderInfo] = field(default_factory=dict)


class PluginHost:
    """Owns the pluggy manager; imports a provider plugin only when its prefix is first used."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.pm.register(fallback_classifier, name="llmplex.fallback_classifier")
        self._lock = threading.RLock()
        self._entries: dict[str, PluginEntry] | None = None
        self._broken: dict[str, BrokenPlugin] = {}
        self._loaded: dict[str, LoadedPlugin] = {}
        self._hooks: dict[str, ProviderHooks] = {}
        self._observers_loaded = False
        self._listeners: ObserverGate | None = None

    # -- listing -----------------------------------------------------------------

    def entries(self) -> dict[str, PluginEntry]:
        """Installed provider entry points by prefix (imports nothing)."""
        if self._entries is None:
            with self._lock:
                if self._entries is None:
                    kept, duplicates = list_entries(PROVIDER_GROUP)
                    for first, dup in duplicates:
                        self._mark_broken(dup, f"prefix {dup.name!r} is already provided by {first.distribution}")
                    self._entries = {e.name: e for e in kept}
        return self._entries

    def broken(self) -> dict[str, BrokenPlugin]:
        """Plugins that failed so far, by entry name."""
        self.entries()
        return dict(self._broken)

    # -- loading -----------------------------------------------------------------

    def load(self, name: str) -> LoadedPlugin:
        """Import and register the provider plugin whose entry point is ``name``."""
        loaded = self._loaded.get(name)
        if loaded is not None:
            return loaded
        with self._lock:
            if name in self._loaded:
                return self._loaded[name]
            entry = self.entries().get(name)
            if entry is None:
                raise LLMConfigurationError(f"no installed plugin provides {name!r}")
            broken = self._broken.get(name)
            if broken is not None and not broken.retried:
                raise self._broken_error(name)
            try:
                loaded = self._import_provider(entry)
            except KeyboardInterrupt:
                raise  # the user's Ctrl-C, not the plugin's failure
            except BaseException as exc:  # a plugin's own failure, sys.exit() included, never escapes as-is
                self._mark_broken(entry, describe_failure(exc), retried=isinstance(exc, ImportError))
                raise self._broken_error(name) from exc
            self._broken.pop(name, None)
            self._loaded[name] = loaded
            self._hooks.clear()
            return loaded

    def _import_provider(self, entry: PluginEntry) -> LoadedPlugin:
        module = importlib.import_module(entry.module)
        same_module = next((p for p in self._loaded.values() if p.module is module), None)
        if same_module is not None:
            providers = same_module.providers
        else:
            self._register(module, f"{PROVIDER_GROUP}:{entry.name}")
            try:
                providers = self._collect_providers(module)
            except BaseException:  # its hooks must not stay active for the other providers
                self.pm.unregister(module)
                self._listeners = None
                raise
        if entry.name not in providers:
            registered = ", ".join(sorted(providers)) or "nothing"
            self.pm.unregister(module)
            raise LLMConfigurationError(f"plugin registered {registered}, not its entry-point name {entry.name!r}")
        for other in providers:
            owner = self.entries().get(other)
            if owner is not None and owner.distribution != entry.distribution:
                self.pm.unregister(module)
                raise LLMConfigurationError(f"plugin registers prefix {other!r}, which {owner.distribution} owns")
        return LoadedPlugin(entry=entry, module=module, providers=providers)

    def _register(self, plugin: object, name: str) -> None:
        self._listeners = None
        try:
            self.pm.register(plugin, name=name)
        except pluggy.PluginValidationError as exc:
            raise LLMConfigurationError(f"plugin {name} is invalid: {exc}") from exc
        finally:
            self._listeners = None  # again: a check made while registering must not stay in force
        for caller in self.pm.get_hookcallers(plugin) or []:
            if not caller.has_spec():
                self.pm.unregister(plugin)
                self._listeners = None
                known = ", ".join(sorted(n for n in dir(hookspecs) if n.startswith("llmplex_")))
                raise LLMConfigurationError(f"implements unknown hook {caller.name!r}; known hooks: {known}")

    def _collect_providers(self, module: ModuleType) -> dict[str, ProviderInfo]:
        found: dict[str, ProviderInfo] = {}

        def register(info: ProviderInfo) -> None:
            if not isinstance(info, ProviderInfo):
                raise LLMConfigurationError(f"register() expects a ProviderInfo, got {type(info).__name__}")
            found[info.name] = info

        others = [p for p in self.pm.get_plugins() if p is not module]
        self.pm.subset_hook_caller("llmplex_register_providers", remove_plugins=others)(register=register)
        return found

    @property
    def observers_loaded(self) -> bool:
        """Whether ``load_observers`` has run (every later call returns at once)."""
        return self._observers_loaded

    def load_observers(self, disabled: Collection[str] = ()) -> None:
        """Import every non-provider plugin (group ``llmplex.plugins``) not in ``disabled``, once."""
        with self._lock:
            if self._observers_loaded:
                return
            kept, _ = list_entries(OBSERVER_GROUP)
            for entry in kept:
                if entry.name in disabled:
                    continue
                try:
                    self._register(importlib.import_module(entry.module), f"{OBSERVER_GROUP}:{entry.name}")
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:  # as for providers: contained, reported
                    self._mark_broken(entry, describe_failure(exc))
            self._hooks.clear()
            self._observers_loaded = True

    def register_observer(self, plugin: object, name: str | None = None) -> None:
        """Register an in-process plugin object (observer or pipeline wrapper)."""
        with self._lock:
            self._register(plugin, name or f"llmplex.observer:{id(plugin)}")
            self._hooks.clear()

    def unregister_observer(self, plugin: object) -> None:
        """Remove a plugin object added with ``register_observer``."""
        with self._lock:
            self.pm.unregister(plugin)
            self._listeners = None
            self._hooks.clear()

    def hooks(self, name: str) -> ProviderHooks:
        """Pipeline hook callers for the loaded provider plugin ``name`` (cached)."""
        hooks = self._hooks.get(name)
        if hooks is None:
            with self._lock:
                plugin = self._loaded[name].module
                others = [p.module for p in self._loaded.values() if p.module is not plugin]
                hooks = self._hooks[name] = bind_provider_hooks(self.pm, plugin, others)
        return hooks

    # -- events ------------------------------------------------------------------

    @property
    def has_event_listeners(self) -> bool:
        """Whether an observer wants events now (to skip building them): a plugin implementing
        ``llmplex_event`` listens unless its ``llmplex_observing`` says it is idle."""
        gate = self._listeners
        if gate is None:
            with self._lock:
                gate = self._listeners = ObserverGate(self.pm)
        return gate.listening()

    def emit(self, event: Any) -> None:
        """Deliver ``event`` to every observer; an observer's failure (even ``sys.exit()``) is warned about,
        not raised. Only ``KeyboardInterrupt`` passes through: it is the user's Ctrl-C."""
        try:
            self.pm.hook.llmplex_event(event=event)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            warnings.warn(f"llmplex event observer failed: {describe_failure(exc)}", PluginLoadWarning, stacklevel=2)

    # -- failures ----------------------------------------------------------------

    def _mark_broken(self, entry: PluginEntry, error: str, retried: bool = False) -> None:
        self._broken[entry.name] = BrokenPlugin(entry, error, retried)
        if not threading.main_thread().is_alive():  # an import a deadline abandoned, failing at exit: no news
            return
        warnings.warn(f"llmplex plugin {entry.label} is broken: {error}", PluginLoadWarning, stacklevel=3)

    def _broken_error(self, name: str) -> LLMConfigurationError:
        broken = self._broken[name]
        again = " (its import is tried again on the next call)" if broken.retried else ""
        return LLMConfigurationError(
            f"provider plugin {broken.entry.label} failed to load: {broken.error}{again}. "
            f"Reinstall or upgrade it (pip install -U {broken.entry.distribution}), or disable it "
            f"with LLMPLEX_DISABLED={name}."
        )
