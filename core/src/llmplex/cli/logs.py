"""``llmplex logs``: read the call log (recent calls, search, filters, cost totals); ``logs on|off|path``.

On a terminal the calls show as a table; piped, as plain text blocks; ``--json``
prints one JSON object per line and call, fields named as ``Response`` and
``Usage`` name them (``usage.cost_usd`` is ``null`` when the price is unknown).
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import click

from llmplex.cli.output import plain_console
from llmplex.cli.usage_line import dollars
from llmplex.client import Client
from llmplex.errors import LLMConfigurationError
from llmplex.masking.secret_url import reveal
from llmplex.masking.values import redact
from llmplex.store.database import default_url, sqlite_path, switch_path

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = ["log_url", "logs_command", "open_log"]


def log_url(client: Client) -> str:
    """The database the CLI logs to: ``[log] database`` or ``logs.db`` in the user data directory."""
    return reveal(client.config.log.database) or default_url()


def open_log(client: Client) -> Engine | None:
    """The call log's engine for reading, or ``None`` when nothing was logged yet (no SQLite file)."""
    from llmplex.store.database import open_database

    try:
        return open_database(log_url(client), create=False)
    except FileNotFoundError:
        return None
    except Exception as exc:
        raise LLMConfigurationError(
            f"the call log at {redact(log_url(client))} cannot be read: {type(exc).__name__}: "
            f"{redact(str(exc)).splitlines()[0][:200]}; set [log] database to another place or move the file away"
        ) from None


def _when(text: str | None, option: str) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is not a date: write 2026-11-26 or 2026-11-26T14:30 (UTC)", param_hint=option
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@click.group("logs", invoke_without_command=True)
@click.option("-n", "--count", "count", type=click.IntRange(min=0), default=3, show_default=True, help="Calls shown.")
@click.option("-q", "--query", help="Only calls whose prompt or answer hold every word of QUERY (full-text search).")
@click.option("-m", "--model", help="Only calls to this model (provider:model, alias or bare name).")
@click.option("--provider", help="Only calls answered by this provider prefix.")
@click.option("--cid", "conversation", help="Only calls of this conversation id.")
@click.option("--since", help="Only calls made from this UTC date or time on (2026-11-26, 2026-11-26T14:30).")
@click.option("--until", help="Only calls made before this UTC date or time.")
@click.option("--status", type=click.Choice(["ok", "error"]), help="Only answered (ok) or failed (error) calls.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per call (or per group with --cost).")
@click.option("--cost", is_flag=True, help="Totals of calls, tokens and US dollars instead of calls.")
@click.option(
    "--by", type=click.Choice(["model", "day", "provider", "key"]), default="model", show_default=True,
    help="How --cost groups the totals.",
)  # fmt: skip
@click.option(
    "--serve", is_flag=True,
    help="Serve the dashboard on 127.0.0.1 until Ctrl-C (llmplex[gateway]); search and filter on the page.",
)  # fmt: skip
@click.option("--port", type=click.IntRange(0, 65535), default=4040, show_default=True, help="The dashboard's port.")
@click.pass_context
def logs_command(
    ctx: click.Context,
    count: int,
    query: str | None,
    model: str | None,
    provider: str | None,
    conversation: str | None,
    since: str | None,
    until: str | None,
    status: str | None,
    as_json: bool,
    cost: bool,
    by: str,
    serve: bool,
    port: int,
) -> None:
    """Show the last calls in the call log (newest first), or with --cost what they cost.

    Subcommands: `llmplex logs off` stops the CLI logging calls, `on` starts it
    again, `path` prints where the log is.
    """
    if ctx.invoked_subcommand is not None:
        return
    from llmplex.store.queries import CallFilter, cost_totals, recent_calls

    client: Client = ctx.obj
    if serve:
        _serve_dashboard(client, port)
        return
    engine = open_log(client)
    if engine is None:
        click.echo(f"no calls logged yet ({redact(log_url(client))})", err=True)
        return
    where = CallFilter(
        query=query,
        model=model,
        provider=provider,
        conversation_id=conversation,
        status=status,
        since=_when(since, "--since"),
        until=_when(until, "--until"),
    )
    try:
        if cost:
            _show_cost(cost_totals(engine, by, where), by, as_json)  # type: ignore[arg-type]
            return
        rows = list(reversed(recent_calls(engine, where, count)))
    finally:
        engine.dispose()
    if as_json:
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False, default=str))
    elif _is_terminal():
        _table(rows)
    else:
        for row in rows:
            click.echo(_block(row))


def _serve_dashboard(client: Client, port: int) -> None:
    """``--serve``: the dashboard over the call log until Ctrl-C (needs the ``gateway`` extra's web stack)."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise LLMConfigurationError(
            f"the dashboard needs {exc.name or 'starlette and uvicorn'}: pip install 'llmplex[gateway]'"
        ) from None
    from llmplex.dashboard.server import serve

    serve(log_url(client), port, announce=click.echo)


def _is_terminal() -> bool:
    """Whether standard output is a terminal (a table) rather than a pipe or file (plain text)."""
    return sys.stdout.isatty()


def _cost_text(usage: dict[str, Any]) -> str:
    cost = usage.get("cost_usd")
    return "unknown" if cost is None else dollars(Decimal(cost))


def _block(row: dict[str, Any]) -> str:
    """One call as plain text: a header line, the prompt, the answer, the figures."""
    usage = row["usage"]
    head = (
        f"# {row['created_at']}  {row['provider']}:{row['model']}  id {row['id']}  "
        f"conversation {row['conversation_id']}  {row['status']}"
    )
    lines = [head]
    messages = row["messages"] or []
    if messages:
        last = messages[-1]
        lines.append(f"prompt ({last.get('role')}): {_content_text(last.get('content'))}")
    if row["status"] == "error":
        lines.append(f"error: {row['error_type']}")
    elif row["text"] is not None or row["tool_calls"]:
        lines.append(f"answer: {row['text'] or ''}")
        for call in row["tool_calls"] or []:
            lines.append(f"tool call: {call.get('name')}({call.get('arguments')})")
    tokens = f"{usage['input_tokens']} input, {usage['output_tokens']} output, {usage['total_tokens']} total"
    lines.append(f"tokens: {tokens}; cost: {_cost_text(usage)}; latency: {row['latency'] or 0:.2f}s")
    return "\n".join(lines) + "\n"


def _content_text(content: Any) -> str:
    if isinstance(content, list):
        pieces = (p if isinstance(p, str) else f"[{p.get('type', 'part')} {p.get('media_type', '')}]" for p in content)
        return " ".join(pieces)
    return str(content or "")


def _table(rows: list[dict[str, Any]]) -> None:
    from rich.table import Table

    table = Table("id", "time (UTC)", "model", "prompt", "answer", "tokens", "cost", "conversation")
    for row in rows:
        messages = row["messages"] or []
        prompt = _content_text(messages[-1].get("content")) if messages else ""
        answer = row["text"] or "".join(f"{c.get('name')}(...) " for c in row["tool_calls"] or [])
        if row["status"] == "error":
            answer = f"error: {row['error_type']}"
        usage = row["usage"]
        table.add_row(
            str(row["id"]),
            (row["created_at"] or "")[:19].replace("T", " "),
            f"{row['provider']}:{row['model']}",
            prompt[:200],
            answer[:400],
            str(usage["total_tokens"] if usage["total_tokens"] is not None else "-"),
            _cost_text(usage),
            (row["conversation_id"] or "")[:12],
        )
    plain_console().print(table)


def _show_cost(groups: list[Any], by: str, as_json: bool) -> None:
    if as_json:
        for g in groups:
            cost = None if g.cost_usd is None else f"{g.cost_usd.normalize():f}"
            line = {by: g.group, "calls": g.calls, "input_tokens": g.input_tokens, "output_tokens": g.output_tokens}
            click.echo(json.dumps({**line, "cost_usd": cost, "unpriced_calls": g.unpriced}))
        return
    total = sum((g.cost_usd or Decimal(0) for g in groups), Decimal(0))
    unpriced = sum(g.unpriced for g in groups)
    width = max([len(by), *(len(g.group) for g in groups)])
    click.echo(f"{by:<{width}}  {'calls':>7}  {'input':>10}  {'output':>10}  cost")
    for g in groups:
        cost = "unknown" if g.cost_usd is None else dollars(g.cost_usd)
        note = f" ({g.unpriced} without a price)" if g.unpriced and g.cost_usd is not None else ""
        click.echo(f"{g.group:<{width}}  {g.calls:>7}  {g.input_tokens:>10}  {g.output_tokens:>10}  {cost}{note}")
    note = f" ({unpriced} calls without a known price not counted)" if unpriced else ""
    click.echo(f"total: {dollars(total)}{note}")


@logs_command.command("off")
def logs_off() -> None:
    """Stop the CLI logging calls (the library logs only when asked anyway)."""
    path = switch_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    click.echo("call log off for the CLI (`llmplex logs on` turns it on)")


@logs_command.command("on")
def logs_on() -> None:
    """Log the CLI's calls again (the default)."""
    switch_path().unlink(missing_ok=True)
    click.echo("call log on for the CLI")


@logs_command.command("path")
@click.pass_obj
def logs_path(client: Client) -> None:
    """Print where the call log is: its file for SQLite, else its URL (password masked)."""
    url = log_url(client)
    path = sqlite_path(url)
    click.echo(str(path) if path is not None else redact(url))
