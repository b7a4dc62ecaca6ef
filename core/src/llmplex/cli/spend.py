"""``llmplex spend``: the gateway's spend, from its request log (``[gateway] database``), grouped and filtered."""

from __future__ import annotations

import json

import click

from llmplex.cli.logs import _when
from llmplex.cli.usage_line import dollars
from llmplex.client import Client

__all__ = ["spend_command"]


@click.command("spend")
@click.option("--key", default=None, help="Only this key's requests.")
@click.option("--model", default=None, help="Only requests for this model (as asked, or as answered).")
@click.option("--since", default=None, help="Only requests from this UTC date or time on (2026-11-26).")
@click.option("--by", type=click.Choice(["key", "model", "day"]), default="key", show_default=True, help="Group by.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line and group.")
@click.pass_context
def spend_command(
    ctx: click.Context, key: str | None, model: str | None, since: str | None, by: str, as_json: bool
) -> None:
    """Requests, tokens and US dollars per key, model or day, from the database `llmplex serve` logs to."""
    from llmplex.gateway.keys.store import KeyStore, database_url
    from llmplex.gateway.spend.log import spend_json, spend_totals

    client = ctx.find_root().obj
    url = database_url((client if isinstance(client, Client) else Client()).config)
    store = KeyStore(url)  # opened (created or migrated) as llmplex serve opens it
    try:
        rows = spend_totals(store.reader, by=by, key=key, model=model, since=_when(since, "--since"))
    finally:
        store.close()
    if as_json:
        for item in spend_json(rows, by):
            click.echo(json.dumps(item))
        return
    if not rows:
        click.echo("no requests logged", err=True)
        return
    click.echo(f"{by:<24} {'requests':>9} {'input':>10} {'output':>10} {'cost':>12}")
    for row in rows:
        cost = "unknown" if row.cost_usd is None else dollars(row.cost_usd)
        note = f"  ({row.unpriced} unpriced)" if row.unpriced else ""
        click.echo(
            f"{(row.group or '-'):<24} {row.calls:>9} {row.input_tokens:>10} {row.output_tokens:>10} {cost:>12}{note}"
        )
