"""Which ``llmplex_event`` observers listen right now: idle ones (``llmplex_observing`` false) cost nothing."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import pluggy

__all__ = ["ObserverGate"]


class ObserverGate:
    """Answers "does anyone listen?" from the plugins registered in ``pm``.

    Built once per change of the registered plugins. An observer without ``llmplex_observing``
    always listens; one with it listens while it returns true (asked on every check, so a plugin
    configured later switches events back on at once).
    """

    def __init__(self, pm: pluggy.PluginManager) -> None:
        listening = {id(impl.plugin): impl.plugin for impl in pm.hook.llmplex_event.get_hookimpls()}
        gates = {id(impl.plugin): impl for impl in pm.hook.llmplex_observing.get_hookimpls()}
        self.always = any(key not in gates for key in listening)
        self.checks: list[tuple[str, Callable[[], object]]] = [
            (impl.plugin_name, impl.function) for key, impl in gates.items() if key in listening
        ]

    def listening(self) -> bool:
        """Whether some observer wants events now; one whose check fails counts as listening."""
        if self.always:
            return True
        for name, check in self.checks:
            try:
                if check():
                    return True
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # a broken check must not hide events nor break the call
                warnings.warn(
                    f"llmplex observer {name}: llmplex_observing failed ({type(exc).__name__}: {exc}); "
                    "it gets every event until fixed",
                    UserWarning,
                    stacklevel=3,
                )
                return True
        return False
