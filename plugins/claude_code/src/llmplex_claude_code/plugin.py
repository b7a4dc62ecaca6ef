"""The hookimpls of the ``claude-code`` plugin: ``claude-code:<model>`` through ``claude -p``.

Model aliases the CLI knows (``sonnet``, ``opus``, ``haiku``) and full model names
pass through unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from llmplex.errors import LLMError
from llmplex.hookspecs import hookimpl
from llmplex.provider import Capabilities, ProviderInfo
from llmplex.types import Request, Response, StreamEvent, StreamState
from llmplex_claude_code.cli import ClaudeCLI, create_client
from llmplex_claude_code.command import SUPPORTED_OPTIONS, format_request
from llmplex_claude_code.errors import classify_error
from llmplex_claude_code.parse import parse_line, parse_result
from llmplex_claude_code.settings import ClaudeCodeSettings


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register the ``claude-code`` prefix."""
    register(
        ProviderInfo(
            name="claude-code",
            settings_model=ClaudeCodeSettings,
            capabilities=Capabilities(
                streaming=True,
                tools=False,
                native_structured_output=True,
                sampling_options=frozenset(SUPPORTED_OPTIONS),
            ),
            default_model="sonnet",
            create_client=create_client,
            description="The Claude Code CLI (claude -p) with its own login: claude-code:sonnet|opus|haiku.",
        )
    )


@hookimpl
def llmplex_format(request: Request) -> dict[str, Any]:
    """The CLI invocation as plain data."""
    return format_request(request)


@hookimpl
def llmplex_call(payload: dict[str, Any], client: ClaudeCLI, timeout: float | None) -> Any:
    """Run ``claude -p --output-format json``; the process group is killed at the deadline."""
    return client.run(payload, timeout)


@hookimpl
async def llmplex_acall(payload: dict[str, Any], client: ClaudeCLI, timeout: float | None) -> Any:
    """Async run through ``asyncio.create_subprocess_exec``."""
    return await client.arun(payload, timeout)


@hookimpl
def llmplex_stream(payload: dict[str, Any], client: ClaudeCLI, timeout: float | None) -> Iterator[Any]:
    """Run with ``--output-format stream-json``; yields its JSON lines."""
    return client.stream(payload, timeout)


@hookimpl
async def llmplex_astream(payload: dict[str, Any], client: ClaudeCLI, timeout: float | None) -> AsyncIterator[Any]:
    """Async twin of ``llmplex_stream``."""
    return client.astream(payload, timeout)


@hookimpl
def llmplex_parse(raw: dict[str, Any], request: Request) -> Response:
    """The result object as a core Response."""
    return parse_result(raw, request)


@hookimpl
def llmplex_parse_event(raw_event: dict[str, Any], state: StreamState) -> list[StreamEvent]:
    """One stream-json line as core stream events."""
    return parse_line(raw_event, state)


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """CLI failures in the core taxonomy; ``None`` for anything else."""
    return classify_error(error)
