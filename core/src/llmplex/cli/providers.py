"""``llmplex providers``: what is installed, enabled, configured — and, with ``--check``, what works.

The listing reads entry-point metadata and the config only, so it imports no
plugin and no provider SDK; ``--check`` imports every enabled plugin to show
its status, capabilities and settings.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from llmplex.cli.output import plain_console
from llmplex.cli.settings_view import SettingRow, setting_rows
from llmplex.client import Client
from llmplex.config.wording import dotted_key
from llmplex.errors import LLMError
from llmplex.masking.values import redact
from llmplex.plugins.core_range import core_range_problem
from llmplex.plugins.discovery import OBSERVER_GROUP, list_entries
from llmplex.plugins.host import PluginLoadWarning
from llmplex.provider import ProviderSettings

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["CheckedRow", "ProviderRow", "check_rows", "provider_rows", "providers_command"]

_CHECK_HINT = "`llmplex providers --check` imports each enabled plugin and shows its status, capabilities and settings."


@dataclass(frozen=True)
class ProviderRow:
    """One line of the listing, from metadata and config alone."""

    prefix: str
    plugin: str
    distribution: str
    version: str
    entry_point: str
    enabled: str
    config: str


@dataclass(frozen=True)
class CheckedRow:
    """One line of ``--check``, and the settings of the plugin that serves it (once it loaded)."""

    prefix: str
    distribution: str
    version: str
    enabled: str
    configured: str
    status: str
    capabilities: str
    settings: list[SettingRow]


def provider_rows(client: Client) -> list[ProviderRow]:
    """Every installed provider and config instance, without importing any plugin."""
    host, config, origins = client.host, client.config, client.router.origins
    entries = host.entries()
    rows = []
    for prefix in sorted(set(entries) | set(config.providers)):
        plugin = config.plugin_of(prefix)
        entry = entries.get(plugin)
        reason = config.is_enabled(prefix)
        notes = [origins.source_of(("providers", prefix))] if prefix in config.providers else []
        instances = sorted(p for p in config.providers if p != prefix and config.plugin_of(p) == prefix)
        if instances:
            notes.append("instances: " + ", ".join(instances))
        rows.append(
            ProviderRow(
                prefix=prefix,
                plugin=plugin if entry else f"{plugin} (not installed)",
                distribution=entry.distribution if entry else "-",
                version=entry.version if entry else "-",
                entry_point=entry.module if entry else "-",
                enabled=f"no: {reason}" if reason else "yes",
                config="; ".join(notes) or "-",
            )
        )
    return rows


def check_rows(client: Client) -> list[CheckedRow]:
    """Every provider of ``provider_rows``, its enabled plugin imported: status, capabilities, settings."""
    host, config, router = client.host, client.config, client.router
    rows = []
    for listed in provider_rows(client):
        row = CheckedRow(listed.prefix, listed.distribution, listed.version, listed.enabled, "-", "disabled", "-", [])
        if listed.enabled != "yes":
            rows.append(row)
            continue
        incompatible = core_range_problem(listed.distribution) if listed.distribution != "-" else None
        if incompatible is not None:  # not imported: code written for another core may break on import
            rows.append(dataclasses.replace(row, status=f"incompatible: {incompatible}"))
            continue
        plugin = config.plugin_of(listed.prefix)
        broken = host.broken().get(plugin)
        if broken is not None or plugin not in host.entries():
            status = f"broken: {broken.error}" if broken else "error: its plugin is not installed"
            rows.append(dataclasses.replace(row, status=status))
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PluginLoadWarning)  # the table shows the failure itself
                info = host.load(plugin).providers[plugin]
        except LLMError:
            rows.append(dataclasses.replace(row, status=f"broken: {host.broken()[plugin].error}"))
            continue
        own_prefix = listed.prefix == plugin
        try:
            instance = router.instance(listed.prefix)
        except LLMError as exc:
            settings = setting_rows(info.settings_model, own_prefix=own_prefix)
            rows.append(dataclasses.replace(row, status=f"error: {exc.message}", settings=settings))
            continue
        problems = instance.settings.problems()
        capabilities = dataclasses.asdict(instance.capabilities)
        parts = capabilities.pop("input_parts")
        capabilities[f"input: {', '.join(sorted(parts))}"] = bool(parts)
        rows.append(
            dataclasses.replace(
                row,
                configured="yes" if not problems else "no: " + "; ".join(problems),
                status="ok",
                capabilities=", ".join(name for name, on in capabilities.items() if _flag_on(on)) or "-",
                settings=setting_rows(
                    info.settings_model,
                    own_prefix=own_prefix,
                    current=instance.settings,
                    sources=_sources(client, listed.prefix, instance.settings),
                ),
            )
        )
    return rows


def _flag_on(value: object) -> bool:
    """A capability to list: a true flag or a non-empty set (numbers such as a batch size are not flags)."""
    return bool(value) and (isinstance(value, bool) or not isinstance(value, int))


def _sources(client: Client, prefix: str, settings: ProviderSettings) -> dict[str, str]:
    origins = client.router.origins
    return {name: origins.source_of(("providers", prefix, name)) for name in settings.model_fields_set}


@click.command("providers")
@click.option(
    "--check",
    is_flag=True,
    help="Import each enabled plugin (and its SDK): show its status (ok, or why it is broken), "
    "whether it is configured, its capabilities, and every setting of its [providers.<prefix>] table "
    "with type, default, environment variable and the value in use (secrets masked).",
)
@click.pass_obj
def providers_command(client: Client, check: bool) -> None:
    """List installed providers and config instances: plugin, distribution, version, entry point, enabled, config.

    The listing reads package metadata only: it imports no plugin and no provider SDK.
    """
    console = plain_console(width=200)
    if not check:
        rows = [dataclasses.astuple(row) for row in provider_rows(client)]
        console.print(_table(("prefix", "plugin", "distribution", "version", "entry point", "enabled", "config"), rows))
        console.print(_CHECK_HINT)
        return
    checked = check_rows(client)
    headers = ("prefix", "distribution", "version", "enabled", "configured", "status", "capabilities")
    console.print(_table(headers, [dataclasses.astuple(row)[: len(headers)] for row in checked]))
    for entry in list_entries(OBSERVER_GROUP)[0]:
        incompatible = core_range_problem(entry.distribution)
        if incompatible is not None:
            console.print(f"observer plugin {entry.name}: incompatible: {incompatible}")
    for row in checked:
        if row.settings:
            console.print()
            console.print(
                _table(
                    ("setting", "type", "default", "environment", "value", "description"),
                    [dataclasses.astuple(setting) for setting in row.settings],
                    title=f"settings of `{row.prefix}` ([{dotted_key(('providers', row.prefix))}] in llmplex.toml)",
                )
            )


def _table(headers: tuple[str, ...], rows: list[tuple[Any, ...]], title: str | None = None) -> Table:
    """A rich table of plain text (printed by ``plain_console``) whose cells fold rather than get cut;
    secrets in any cell (a key in a ``base_url`` quoted by a problem or an error) are masked."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for header in headers:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*(redact(str(cell)) for cell in row))
    return table
