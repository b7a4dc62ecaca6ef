"""``llmplex complete``: one prompt, streamed to the terminal."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from llmplex.cli.usage_line import usage_line
from llmplex.client import Client
from llmplex.engine.request_builder import PromptInput
from llmplex.errors import LLMConfigurationError
from llmplex.store.recorder import call_context
from llmplex.types import LLMConfig, Message, Response
from llmplex.types.parts import part_from_path

__all__ = ["complete_command", "parse_option"]


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value``; the value is read as JSON when it parses, else kept as a string."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise click.BadParameter(f"{text!r} is not key=value", param_hint="-o")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


@click.command("complete")
@click.argument("prompt", required=False)
@click.option("-m", "--model", help="provider:model (default: the configured default model).")
@click.option("-s", "--system", help="System prompt.")
@click.option("--max-tokens", type=int, help="Maximum tokens to generate.")
@click.option("--temperature", type=float, help="Sampling temperature.")
@click.option("-o", "--option", "raw_options", multiple=True, help="key=value option (repeatable).")
@click.option(
    "-a",
    "--attach",
    "attachments",
    multiple=True,
    metavar="FILE",
    help="An image, PDF or audio file sent after the prompt (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole Response as JSON instead of streaming.")
@click.option("--usage", "show_usage", is_flag=True, help="Print the tokens used and their cost on stderr.")
@click.option(
    "-c", "--continue", "continue_last", is_flag=True, help="Continue the most recent conversation of the call log."
)
@click.option("--cid", help="Continue the conversation with this id (see `llmplex logs`).")
@click.option(
    "--mcp",
    "mcp_servers",
    multiple=True,
    metavar="NAME",
    help="Run the tool loop with the tools of this [mcp.servers.NAME] server (repeatable); prints the final answer.",
)
@click.pass_obj
def complete_command(
    client: Client,
    prompt: str | None,
    model: str | None,
    system: str | None,
    max_tokens: int | None,
    temperature: float | None,
    raw_options: tuple[str, ...],
    attachments: tuple[str, ...],
    as_json: bool,
    show_usage: bool,
    continue_last: bool,
    cid: str | None,
    mcp_servers: tuple[str, ...],
) -> None:
    """Send PROMPT (or standard input) to a model and print the answer as it arrives.

    Standard output is the answer alone; standard error then names the model that
    answered and says when max_tokens cut the answer. With --json, standard output
    is the whole Response (model and finish_reason included) and nothing is added.
    With --usage, standard error ends with the tokens used and their cost in US dollars.
    Each -a FILE (PNG, JPEG, GIF, WebP, PDF, WAV or MP3) goes with the prompt, in order.
    With -c (or --cid ID) the logged conversation (tool calls and results included) is sent
    first, to the model it used unless -m names another. With --mcp NAME the model may call the
    tools of that configured MCP server (the tool loop runs, then the final answer is printed).
    """
    if prompt is None:
        if sys.stdin.isatty():
            raise click.UsageError("give a PROMPT argument or pipe the prompt on standard input")
        # bytes that are not UTF-8 become lone surrogates, which core refuses with a typed error
        prompt = sys.stdin.buffer.read().decode("utf-8", errors="surrogateescape")
    parts = [part_from_path(path) for path in attachments]
    message: PromptInput = [prompt, *parts] if parts else prompt
    conversation: str | None = None
    if continue_last or cid is not None:
        conversation, history, used = continued(client, cid)
        if system is not None:
            history = [m for m in history if m.role != "system"]
        message = [*history, Message.user([prompt, *parts] if parts else prompt)]
        model = model or used
    tools = [client.mcp_server(name) for name in mcp_servers]
    try:
        with call_context(conversation_id=conversation):
            _send(client, model, message, system, raw_options, max_tokens, temperature, as_json, show_usage, tools)
    finally:
        for server in tools:  # their processes end with the command
            server.close()


def _send(
    client: Client,
    model: str | None,
    message: PromptInput,
    system: str | None,
    raw_options: tuple[str, ...],
    max_tokens: int | None,
    temperature: float | None,
    as_json: bool,
    show_usage: bool,
    tools: list[Any],
) -> None:
    given = dict(parse_option(o) for o in raw_options)
    options = {k: v for k, v in given.items() if k in LLMConfig.model_fields}
    provider_options = {k: v for k, v in given.items() if k not in LLMConfig.model_fields}
    if max_tokens is not None:
        options["max_tokens"] = max_tokens
    if temperature is not None:
        options["temperature"] = temperature
    kwargs: dict[str, Any] = {"system": system, "provider_options": provider_options, **options}
    if tools:  # the tool loop runs in complete(); its final answer is printed whole
        kwargs["tools"] = tools
    if as_json or tools:
        response = client.complete(model, message, **kwargs)
        click.echo(response.model_dump_json(indent=2) if as_json else response.text)
        if not as_json:
            _label(response, max_tokens=options.get("max_tokens"))
        if show_usage:
            click.echo(usage_line(response.usage, response.usage.cost_usd), err=True)
        return
    answer: Response | None = None
    for event in client.stream(model, message, **kwargs):
        if event.type == "text":
            click.echo(event.text, nl=False)
        elif event.type == "response" and event.response is not None:
            answer = event.response
            for call in answer.tool_calls:
                click.echo(f"\n[tool call] {call.name}({call.arguments})", nl=False)
    click.echo()
    if answer is not None:
        _label(answer, max_tokens=options.get("max_tokens"))
        if show_usage:
            click.echo(usage_line(answer.usage, answer.usage.cost_usd), err=True)


def continued(client: Client, cid: str | None) -> tuple[str, list[Message], str]:
    """The conversation to continue (``cid``, else the latest logged), its messages, and the model it used."""
    from llmplex.cli.logs import open_log
    from llmplex.store.queries import conversation_messages, latest_conversation_id

    engine = open_log(client)
    if engine is None:
        raise LLMConfigurationError("the call log is empty: there is no conversation to continue")
    try:
        conversation = cid or latest_conversation_id(engine)
        if conversation is None:
            raise LLMConfigurationError("the call log is empty: there is no conversation to continue")
        history, used = conversation_messages(engine, conversation)
    finally:
        engine.dispose()
    return conversation, history, used or ""


def _label(response: Response, max_tokens: Any) -> None:
    """On stderr, so that stdout stays the answer: who answered, and whether max_tokens cut the answer."""
    click.echo(f"[answered by {response.provider}:{response.model}]", err=True)
    if response.finish_reason == "length":
        limit = f"max_tokens={max_tokens}" if max_tokens is not None else "the provider's default max_tokens"
        click.echo(f"[cut at {limit}: raise --max-tokens for a longer answer]", err=True)
