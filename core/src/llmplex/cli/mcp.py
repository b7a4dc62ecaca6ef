"""``llmplex mcp list [NAME] [--check]``: the configured MCP servers, and with ``--check`` whether they work."""

from __future__ import annotations

import click

from llmplex.client import Client
from llmplex.config.mcp import MCPServerConfig
from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.masking.values import REDACTED, redact

__all__ = ["mcp_command"]


@click.group("mcp")
def mcp_command() -> None:
    """MCP servers whose tools calls may use ([mcp.servers.NAME] tables)."""


@mcp_command.command("list")
@click.argument("names", nargs=-1)
@click.option("--check", is_flag=True, help="Start each server and list its tools (otherwise nothing is started).")
@click.option("--timeout", type=float, default=30.0, show_default=True, help="Seconds each check may take.")
@click.pass_obj
def list_command(client: Client, names: tuple[str, ...], check: bool, timeout: float) -> None:
    """Show each configured MCP server (or those NAMEd) from the config alone.

    With --check each is started, its status and tools shown, and stopped again;
    the exit status is 1 when one of them fails.
    """
    servers = client.config.mcp.servers
    unknown = [name for name in names if name not in servers]
    if unknown:
        known = ", ".join(sorted(servers)) or "none"
        raise LLMConfigurationError(
            f"no MCP server named {', '.join(map(repr, unknown))} in the config (configured: {known}); "
            "add an [mcp.servers.NAME] table"
        )
    if not servers:
        click.echo("no MCP servers configured: add an [mcp.servers.NAME] table with command or url")
        return
    failed = False
    for name in names or tuple(sorted(servers)):
        click.echo(f"{name}: {_where(servers[name])}")
        if check:
            failed = not _check(client, name, timeout) or failed
    if failed:
        raise click.exceptions.Exit(1)


def _where(table: MCPServerConfig) -> str:
    """How the server is reached, with env and header values hidden."""
    if table.command is not None:
        shown = redact(" ".join([table.command, *table.args]))  # a key given as an argument is masked too
        env = " ".join(f"{key}={REDACTED}" for key in table.env)
        return f"stdio: {shown}" + (f" (env: {env})" if env else "") + (f" (cwd: {table.cwd})" if table.cwd else "")
    headers = ", ".join(table.headers)
    return f"{table.kind}: {redact(table.url or '')}" + (f" (headers: {headers})" if headers else "")


def _check(client: Client, name: str, timeout: float) -> bool:
    server = client.mcp_server(name)
    try:
        tools = server.list_tools(timeout=timeout)
    except LLMError as exc:
        click.echo(f"  status: failed: {type(exc).__name__}: {exc}")
        return False
    finally:
        server.close()
    click.echo(f"  status: ok, {len(tools)} tool{'s' if len(tools) != 1 else ''}")
    for tool in tools:
        summary = (tool.description or "").strip().splitlines()
        click.echo(f"  - {tool.name}" + (f": {summary[0]}" if summary else ""))
    return True
