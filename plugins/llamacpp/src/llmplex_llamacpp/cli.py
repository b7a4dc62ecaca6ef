"""``llmplex local start|stop|status``: keep one local model server running across commands."""

from __future__ import annotations

import click

from llmplex_llamacpp.errors import LocalModelError
from llmplex_llamacpp.model_files import DEFAULT_MODEL
from llmplex_llamacpp.server import PersistentStatus, start_persistent, status, stop_persistent

__all__ = ["local"]


def _report(result: PersistentStatus) -> None:
    click.echo(result.detail)


@click.group("local")
def local() -> None:
    """Run the local llama.cpp model server in the background (llmplex-llamacpp)."""


@local.command("start")
@click.option("-m", "--model", default=DEFAULT_MODEL, show_default=True, help="Model name or .gguf path.")
@click.option("--n-ctx", default=4096, show_default=True, help="Context window in tokens.")
def start(model: str, n_ctx: int) -> None:
    """Start a server that later `llmplex` commands reuse."""
    try:
        _report(start_persistent(model, n_ctx=n_ctx))
    except LocalModelError as exc:
        raise click.ClickException(str(exc)) from exc


@local.command("status")
def show_status() -> None:
    """Say whether the background server is running."""
    result = status()
    _report(result)
    if result.state != "running":
        raise SystemExit(1)


@local.command("stop")
def stop() -> None:
    """Stop the background server."""
    try:
        _report(stop_persistent())
    except LocalModelError as exc:
        raise click.ClickException(str(exc)) from exc
