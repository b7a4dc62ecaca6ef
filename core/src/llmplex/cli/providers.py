"""``llmplex providers``: what is installed, enabled, configured — and what is broken."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import click

from llmplex.client import Client
from llmplex.errors import LLMError
from llmplex.plugins.host import PluginLoadWarning

__all__ = ["ProviderRow", "provider_rows", "providers_command"]


@dataclass(frozen=True)
class ProviderRow:
    """One line of the providers table."""

    prefix: str
    distribution: str
    version: str
    enabled: bool
    configured: str
    status: str


def provider_rows(client: Client) -> list[ProviderRow]:
    """Inspect every installed provider and config instance (imports enabled plugins only)."""
    host, config = client.host, client.config
    entries = host.entries()
    prefixes = sorted(set(entries) | set(config.providers))
    rows = []
    for prefix in prefixes:
        entry = entries.get(config.plugin_of(prefix))
        dist, version = (entry.distribution, entry.version) if entry else ("-", "-")
        reason = config.is_enabled(prefix)
        if reason:
            rows.append(ProviderRow(prefix, dist, version, False, "-", "disabled"))
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PluginLoadWarning)  # the table shows the failure itself
                instance = client.router.instance(prefix)
        except LLMError as exc:
            broken = host.broken().get(config.plugin_of(prefix))
            status = f"broken: {broken.error}" if broken else f"error: {exc.message}"
            rows.append(ProviderRow(prefix, dist, version, True, "-", status))
            continue
        problems = instance.settings.problems()
        configured = "yes" if not problems else "no: " + "; ".join(problems)
        rows.append(ProviderRow(prefix, dist, version, True, configured, "ok"))
    return rows


@click.command("providers")
@click.pass_obj
def providers_command(client: Client) -> None:
    """List installed providers: distribution, version, enabled, configured, status."""
    from rich.console import Console
    from rich.table import Table

    table = Table("prefix", "distribution", "version", "enabled", "configured", "status")
    for row in provider_rows(client):
        table.add_row(
            row.prefix, row.distribution, row.version, "yes" if row.enabled else "no", row.configured, row.status
        )
    Console(width=200).print(table)
