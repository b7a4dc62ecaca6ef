"""The model groups of one Router: checked when the config loads, built on first use."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from llmplex.config.schema import Config
from llmplex.errors import LLMConfigurationError
from llmplex.plugins.host import PluginHost
from llmplex.reliability.clock import Clock
from llmplex.reliability.storage import MEMORY, store_for
from llmplex.routing.groups import Deployment, Group, Route, flattened
from llmplex.routing.health import Board, CoolRule, MemoryBoard
from llmplex.routing.reach import Reach
from llmplex.routing.windows import Windows

__all__ = ["GroupTable"]


class GroupTable:
    """``config.groups`` as live ``Group`` objects sharing one health board (memory, or Redis)."""

    def __init__(
        self,
        config: Config,
        host: PluginHost,
        clock: Clock,
        unalias: Callable[[str], str],
        installed: Callable[[], str],
    ) -> None:
        self.config = config
        self.clock = clock
        self._unalias = unalias
        self._groups: dict[str, Group] = {}
        self._lock = threading.Lock()
        self._board: Board | None = None
        self._local: object = None
        self._reach = Reach()
        for name in config.groups:
            for _, spec, _, _, _, _ in flattened(name, config.groups, unalias):
                self._check(name, spec, host, installed)

    def __contains__(self, name: object) -> bool:
        return name in self.config.groups

    def _check(self, group: str, spec: str, host: PluginHost, installed: Callable[[], str]) -> None:
        """An unknown prefix in a deployment is a config error now, not at the first call."""
        prefix, sep, model = spec.partition(":")
        if not sep and not self.config.default_provider:
            problem = "has no provider prefix (write it as 'provider:model') and no default_provider is set"
        elif sep and (not prefix or not model):
            problem = "must be 'provider:model' with both parts"
        elif sep and self.config.plugin_of(prefix) not in host.entries():
            problem = f"has an unknown provider prefix {prefix!r} (installed: {installed()})"
        else:
            return
        raise LLMConfigurationError(f"model group {group!r}: deployment {spec!r} {problem}; fix [groups.{group}]")

    def group(self, name: str, resolve: Callable[[str], Route]) -> Group:
        """The live group ``name`` (built on first use)."""
        found = self._groups.get(name)
        if found is None:
            with self._lock:
                found = self._groups.get(name)
                if found is None:
                    found = self._groups[name] = self._build(name, resolve)
        return found

    def _build(self, name: str, resolve: Callable[[str], Route]) -> Group:
        store = store_for(self.config.limits)
        if self._board is None:
            from limits.storage import MemoryStorage

            self._local = MemoryStorage()
            if store.url == MEMORY:
                self._board = MemoryBoard(self.clock.monotonic)
            else:
                from llmplex.routing.shared_health import RedisBoard

                self._board = RedisBoard(store, MemoryBoard(time.monotonic), self._reach)
        deployments = []
        for owner, spec, weight, config, rpm, tpm in flattened(name, self.config.groups, self._unalias):
            key = f"{owner}:{spec}"
            windows = Windows(key, rpm, tpm, store, self._local, self._reach)
            deployments.append(Deployment(spec, weight, windows, key, CoolRule(config.allowed_fails, config.cooldown)))
        return Group(name, self.config.groups[name], deployments, self._board, resolve)
