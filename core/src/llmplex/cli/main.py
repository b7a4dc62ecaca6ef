"""The ``llmplex`` command group: global options and error handling."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import click

from llmplex.cli.batch import batch_command
from llmplex.cli.complete import complete_command
from llmplex.cli.exit_codes import exit_code_for
from llmplex.cli.providers import providers_command
from llmplex.errors import LLMError

__all__ = ["cli", "main"]


class _Group(click.Group):
    """Turns every LLMError into one line on stderr and an exit status per kind."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except LLMError as exc:
            if ctx.meta.get("llmplex.debug"):
                traceback.print_exc()
            click.echo(f"error: {type(exc).__name__}: {exc}", err=True)
            ctx.exit(exit_code_for(exc))


@click.group(cls=_Group)
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="A TOML config file to use.")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.version_option(package_name="llmplex")
@click.pass_context
def cli(ctx: click.Context, config_path: Path | None, debug: bool) -> None:
    """One interface to every LLM provider."""
    from llmplex.client import Client

    ctx.meta["llmplex.debug"] = debug
    try:
        ctx.obj = Client(config_path)
    except LLMError as exc:
        click.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        ctx.exit(exit_code_for(exc))


cli.add_command(providers_command)
cli.add_command(complete_command)
cli.add_command(batch_command)


def main() -> None:
    """Console-script entry point."""
    sys.exit(cli.main(standalone_mode=True))
