"""``llmplex models [PROVIDER]``: the models each provider serves, as a table or JSON."""

from __future__ import annotations

import json

import click

from llmplex.cli.output import plain_console
from llmplex.cli.providers import provider_rows
from llmplex.client import Client
from llmplex.errors import LLMError
from llmplex.types import ModelInfo

__all__ = ["models_command"]

_HEADERS = ("provider", "model", "context", "max output", "input", "features")


def _listed(client: Client, provider: str | None) -> list[ModelInfo]:
    """One provider's models (errors raise), or those of every enabled, configured provider that can list
    them (errors are warnings)."""
    if provider is not None:
        return client.models(provider)
    found: list[ModelInfo] = []
    for row in provider_rows(client):
        if row.enabled != "yes" or row.distribution == "-":
            continue
        try:
            instance = client.router.instance(row.prefix)
            if not instance.hooks.implements("models"):
                continue
            problems = instance.settings.problems()
            if problems:
                click.echo(f"warning: {row.prefix}: skipped, not configured: {'; '.join(problems)}", err=True)
                continue
            found.extend(client.models(row.prefix))
        except LLMError as exc:
            click.echo(f"warning: {row.prefix}: {type(exc).__name__}: {exc}", err=True)
    return found


def _cell(value: object) -> str:
    if value is None or value == ():
        return "-"
    return ", ".join(value) if isinstance(value, tuple) else str(value)


@click.command("models")
@click.argument("provider", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of models instead of a table.")
@click.pass_obj
def models_command(client: Client, provider: str | None, as_json: bool) -> None:
    """List the models PROVIDER serves (every enabled, configured provider without it): id, context
    window, max output tokens, input parts and features, where the provider or genai-prices knows them."""
    models = _listed(client, provider)
    if as_json:
        click.echo(json.dumps([m.model_dump(mode="json") for m in models], indent=2, ensure_ascii=False))
        return
    from rich.table import Table

    table = Table()
    for header in _HEADERS:
        table.add_column(header, overflow="fold")
    for m in models:
        table.add_row(
            m.provider, m.id, *(_cell(v) for v in (m.context_window, m.max_output_tokens, m.input_parts, m.features))
        )
    plain_console(width=200).print(table)
