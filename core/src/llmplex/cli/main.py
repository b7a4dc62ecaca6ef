"""The ``llmplex`` command group: global options and error handling."""

from __future__ import annotations

import sys
import traceback
import warnings
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import click

from llmplex.cli.batch import batch_command
from llmplex.cli.complete import complete_command
from llmplex.cli.embed import embed_command
from llmplex.cli.exit_codes import exit_code_for
from llmplex.cli.keys import keys_command
from llmplex.cli.logs import logs_command
from llmplex.cli.mcp import mcp_command
from llmplex.cli.models import models_command
from llmplex.cli.providers import providers_command
from llmplex.cli.serve import serve_command
from llmplex.cli.spend import spend_command
from llmplex.client import Client
from llmplex.errors import LLMError
from llmplex.plugins.host import describe_failure

__all__ = ["cli", "main"]


COMMAND_GROUP = "llmplex.commands"


class _Group(click.Group):
    """Turns every LLMError into one line on stderr and an exit status per kind.

    Plugins add subcommands through entry points in the ``llmplex.commands``
    group (name = command, value = ``module:click_command``); a plugin command
    is imported only when it is run or help lists it, and a broken one is
    reported without breaking the others.
    """

    def _plugin_commands(self) -> dict[str, EntryPoint]:
        return {ep.name: ep for ep in entry_points(group=COMMAND_GROUP) if ep.name not in self.commands}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._plugin_commands()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        entry = self._plugin_commands().get(cmd_name)
        if entry is None:
            return None
        try:
            loaded = entry.load()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # sys.exit() in a plugin module is its failure, not the CLI's exit status
            return _broken_command(cmd_name, entry, exc)
        return loaded if isinstance(loaded, click.Command) else None

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except LLMError as exc:
            if ctx.meta.get("llmplex.debug"):
                traceback.print_exc()
            click.echo(f"error: {type(exc).__name__}: {exc}", err=True)
            ctx.exit(exit_code_for(exc))


def _broken_command(name: str, entry: EntryPoint, error: BaseException) -> click.Command:
    """A stand-in that lists as broken in help and fails with the reason when run."""
    dist = entry.dist.name if entry.dist else "its plugin"
    message = f"command {name!r} from {dist} failed to load: {describe_failure(error)}"

    def fail() -> None:
        raise click.ClickException(message)

    return click.Command(name, callback=fail, help=f"(broken) {message}", short_help="(broken plugin command)")


@click.group(cls=_Group)
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="A TOML config file to use.")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.version_option(package_name="llmplex")
@click.pass_context
def cli(ctx: click.Context, config_path: Path | None, debug: bool) -> None:
    """One interface to every LLM provider."""
    from llmplex.client import Client

    ctx.meta["llmplex.debug"] = debug
    ctx.obj = Client(config_path)  # a config error is reported by _Group.invoke like any other LLMError
    _log_calls(ctx, ctx.obj)


def _log_calls(ctx: click.Context, client: Client) -> None:
    """The CLI logs its calls unless ``[log] enabled = false`` or ``llmplex logs off``; what is pending is
    written before the command exits."""
    from llmplex.store.database import switched_off

    if client.call_log is None and client.config.log.enabled is None and not switched_off():
        client.attach_log()
    log = client.call_log
    if log is not None:
        ctx.call_on_close(lambda: log.flush(timeout=10.0))


cli.add_command(providers_command)
cli.add_command(complete_command)
cli.add_command(batch_command)
cli.add_command(models_command)
cli.add_command(embed_command)
cli.add_command(serve_command)
cli.add_command(logs_command)
cli.add_command(mcp_command)
cli.add_command(keys_command)
cli.add_command(spend_command)


def _one_line_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, line: str | None = None
) -> str:
    return f"warning: {message}\n"


def main() -> None:
    """Console-script entry point: warnings (a broken plugin, a failing observer) print as one line each."""
    warnings.formatwarning = _one_line_warning
    sys.exit(cli.main(standalone_mode=True))
