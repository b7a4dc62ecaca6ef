"""``llmplex keys``: the gateway's virtual keys (create, list, show, update, revoke) in the database the config names.

Works with or without a gateway running: the keys live in ``[gateway] database``
(else ``[log] database``, else ``logs.db``), the same database ``llmplex serve``
reads. ``create`` prints the key once, alone on stdout (``--json``: the whole record).
"""

from __future__ import annotations

import json
from typing import Any

import click

from llmplex.client import Client

__all__ = ["keys_command"]


def _store(ctx: click.Context) -> Any:
    from llmplex.gateway.keys.store import KeyStore, database_url

    client = ctx.find_root().obj
    return KeyStore(database_url((client if isinstance(client, Client) else Client()).config))


def _options(
    budget_usd: str | None,
    budget_period: str | None,
    rpm: int | None,
    tpm: int | None,
    max_parallel: int | None,
    models: str | None,
    expires: str | None,
) -> dict[str, Any]:
    given = {
        "budget_usd": budget_usd,
        "budget_period": budget_period,
        "rpm": rpm,
        "tpm": tpm,
        "max_parallel": max_parallel,
        "models": models,
        "expires": expires,
    }
    return {k: v for k, v in given.items() if v is not None}


def _caps(func: Any) -> Any:
    for option in reversed(
        [
            click.option("--budget-usd", default=None, help="US dollars the key may spend (per period if one is set)."),
            click.option("--budget-period", default=None, help="The budget's period: 90s, 12h, 30d (default: ever)."),
            click.option("--rpm", type=int, default=None, help="Requests per minute."),
            click.option("--tpm", type=int, default=None, help="Tokens per minute."),
            click.option("--max-parallel", type=int, default=None, help="Requests in flight at once."),
            click.option("--models", default=None, help="Model patterns it may use, comma-separated (openai:*)."),
            click.option("--expires", default=None, help="Expires after this long: 90s, 12h, 30d."),
        ]
    ):
        func = option(func)
    return func


def _print(record: Any, as_json: bool) -> None:
    data = record.as_json()
    if as_json:
        click.echo(json.dumps(data))
        return
    for name, value in data.items():
        if value not in (None, [], {}):
            click.echo(f"{name}: {', '.join(value) if isinstance(value, list) else value}")


@click.group("keys")
def keys_command() -> None:
    """The gateway's virtual keys (in the database `llmplex serve` uses)."""


@keys_command.command("create")
@click.option("--name", required=True, help="The key's name (shown in logs, metrics and spend).")
@_caps
@click.option("--team", default=None, help="Its team: keys of one team may continue each other's responses.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole record as JSON (with the key).")
@click.pass_context
def create(ctx: click.Context, /, name: str, team: str | None, as_json: bool, **caps: Any) -> None:
    """Make a key; it is printed once, alone on stdout, and only its hash is kept."""
    from llmplex.gateway.ops.admin import key_options

    store = _store(ctx)
    given = {**_options(**caps), **({"team": team} if team is not None else {})}
    try:
        key, record = store.create(name, **key_options(given, creating=True))
    finally:
        store.close()
    click.echo(json.dumps({**record.as_json(), "key": key}) if as_json else key)


@keys_command.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.pass_context
def list_keys(ctx: click.Context, as_json: bool) -> None:
    """Every key with its status and caps (never the keys themselves)."""
    store = _store(ctx)
    try:
        records = store.list()
    finally:
        store.close()
    for record in records:
        if as_json:
            click.echo(json.dumps(record.as_json()))
            continue
        caps = [
            f"{name}={value}"
            for name, value in (
                ("budget_usd", record.budget_usd),
                ("rpm", record.rpm),
                ("tpm", record.tpm),
                ("max_parallel", record.max_parallel),
            )
            if value is not None
        ]
        models = ",".join(record.models) or "*"
        click.echo(f"{record.name}\t{record.status()}\tmodels={models}\t{' '.join(caps)}".rstrip())


@keys_command.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="As JSON.")
@click.pass_context
def show(ctx: click.Context, name: str, as_json: bool) -> None:
    """One key's record."""
    store = _store(ctx)
    try:
        _print(store.get(name), as_json)
    finally:
        store.close()


@keys_command.command("update")
@click.argument("name")
@_caps
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON.")
@click.pass_context
def update(ctx: click.Context, /, name: str, as_json: bool, **caps: Any) -> None:
    """Change a key's caps, models or expiry (a gateway sees it within [gateway] key_cache_seconds)."""
    from llmplex.gateway.ops.admin import key_options

    store = _store(ctx)
    try:
        _print(store.update(name, **key_options(_options(**caps), creating=False)), as_json)
    finally:
        store.close()


@keys_command.command("revoke")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON.")
@click.pass_context
def revoke(ctx: click.Context, name: str, as_json: bool) -> None:
    """Revoke a key for good (its spend stays in the log)."""
    store = _store(ctx)
    try:
        _print(store.revoke(name), as_json)
    finally:
        store.close()
