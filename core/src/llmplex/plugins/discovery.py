"""List plugins from entry-point metadata without importing any of them."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points

__all__ = ["OBSERVER_GROUP", "PROVIDER_GROUP", "PluginEntry", "list_entries"]

PROVIDER_GROUP = "llmplex.providers"
OBSERVER_GROUP = "llmplex.plugins"


@dataclass(frozen=True)
class PluginEntry:
    """One entry point: for providers, ``name`` is the prefix it serves."""

    name: str
    module: str
    distribution: str
    version: str

    @property
    def label(self) -> str:
        """``name (distribution version)`` for messages."""
        return f"{self.name} ({self.distribution} {self.version})"


def list_entries(group: str) -> tuple[list[PluginEntry], list[tuple[PluginEntry, PluginEntry]]]:
    """Entries of ``group`` sorted by name, and ``(kept, duplicate)`` pairs for names claimed twice.

    When two distributions claim one name, the one whose distribution name sorts
    first is kept, so the outcome does not depend on install order.
    """
    found: list[PluginEntry] = []
    for ep in entry_points(group=group):
        dist = ep.dist
        found.append(
            PluginEntry(
                name=ep.name,
                module=ep.value.partition(":")[0],
                distribution=dist.name if dist else "?",
                version=dist.version if dist else "?",
            )
        )
    found.sort(key=lambda e: (e.name, e.distribution))
    kept: dict[str, PluginEntry] = {}
    duplicates: list[tuple[PluginEntry, PluginEntry]] = []
    for entry in found:
        if entry.name in kept:
            if kept[entry.name].distribution != entry.distribution:
                duplicates.append((kept[entry.name], entry))
            continue
        kept[entry.name] = entry
    return list(kept.values()), duplicates
