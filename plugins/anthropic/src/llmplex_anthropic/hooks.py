"""The ``anthropic`` provider: hook implementations on the official ``anthropic`` SDK."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any

import anthropic

from llmplex.errors import LLMError
from llmplex.hookspecs import hookimpl
from llmplex.provider import Capabilities, ProviderInfo
from llmplex.types import (
    BatchLimits,
    BatchOutcome,
    BatchRequest,
    BatchStatus,
    ModelInfo,
    Request,
    Response,
    StreamEvent,
    StreamState,
    Tool,
)
from llmplex_anthropic import batch
from llmplex_anthropic.clients import create_async_client, create_client
from llmplex_anthropic.errors import classify_error
from llmplex_anthropic.lean import sender
from llmplex_anthropic.request import SUPPORTED_OPTIONS, format_request, tool_declaration
from llmplex_anthropic.response import parse_message
from llmplex_anthropic.settings import AnthropicSettings
from llmplex_anthropic.streaming import parse_stream_event
from llmplex_anthropic.thinking import FORMAT as THINKING_FORMAT


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register the ``anthropic`` prefix."""
    register(
        ProviderInfo(
            name="anthropic",
            settings_model=AnthropicSettings,
            capabilities=Capabilities(
                streaming=True,
                tools=True,
                native_structured_output=True,
                input_parts=frozenset({"image", "document"}),
                sampling_options=frozenset(SUPPORTED_OPTIONS),
                prompt_cache=True,
                reasoning_formats=frozenset({THINKING_FORMAT}),
            ),
            default_model="claude-sonnet-4-6",
            create_client=create_client,
            create_async_client=create_async_client,
            description="Anthropic Claude (Messages API) on the official anthropic SDK.",
        )
    )


@hookimpl
def llmplex_format(request: Request, settings: AnthropicSettings) -> dict[str, Any]:
    """The ``messages.create`` keyword arguments for ``request``."""
    return format_request(request, settings)


def _chosen(timeout: float | None, settings: AnthropicSettings) -> float | None:
    """The per-call timeout: the deadline's remaining seconds, capped by the configured timeout."""
    configured = settings.timeout
    if timeout is None or configured is None:  # one of them, or neither (no generator on every call)
        return configured if timeout is None else timeout
    return min(timeout, configured)


def _timeout(timeout: float | None, settings: AnthropicSettings) -> dict[str, Any]:
    """The per-call SDK timeout argument (none: the SDK's default)."""
    chosen = _chosen(timeout, settings)
    return {} if chosen is None else {"timeout": chosen}


@hookimpl
def llmplex_call(
    payload: dict[str, Any], settings: AnthropicSettings, client: anthropic.Anthropic, timeout: float | None
) -> Any:
    """One ``messages.create`` call: the lean path's decoded JSON, or the SDK's ``Message``."""
    chosen = _chosen(timeout, settings)
    lean = sender(client, payload, chosen)
    if lean is not None:
        return lean[0].send(payload, lean[1], chosen)
    return client.messages.create(**payload, **_timeout(timeout, settings))


@hookimpl
def llmplex_acall(
    payload: dict[str, Any], settings: AnthropicSettings, client: anthropic.AsyncAnthropic, timeout: float | None
) -> Awaitable[Any]:
    """One async ``messages.create`` call: what to await (no coroutine of its own: one frame fewer on every
    resumption of the call)."""
    chosen = _chosen(timeout, settings)
    lean = sender(client, payload, chosen)
    if lean is not None:
        return lean[0].asend(payload, lean[1], chosen)
    return client.messages.create(**payload, **_timeout(timeout, settings))


@hookimpl
def llmplex_stream(
    payload: dict[str, Any], settings: AnthropicSettings, client: anthropic.Anthropic, timeout: float | None
) -> Iterator[Any]:
    """The raw stream events of one streamed ``messages.create``; the response is closed at the end."""
    chosen = _chosen(timeout, settings)
    lean = sender(client, payload, chosen, stream=True)
    if lean is not None:
        return lean[0].stream(payload, lean[1], chosen)
    stream = client.messages.create(**payload, stream=True, **_timeout(timeout, settings))

    def events() -> Iterator[Any]:
        with stream:
            yield from stream

    return events()


@hookimpl
async def llmplex_astream(
    payload: dict[str, Any], settings: AnthropicSettings, client: anthropic.AsyncAnthropic, timeout: float | None
) -> AsyncIterator[Any]:
    """Async twin of ``llmplex_stream``."""
    chosen = _chosen(timeout, settings)
    lean = sender(client, payload, chosen, stream=True)
    if lean is not None:
        return await lean[0].astream(payload, lean[1], chosen)
    stream = await client.messages.create(**payload, stream=True, **_timeout(timeout, settings))

    async def events() -> AsyncIterator[Any]:
        async with stream:
            async for event in stream:
                yield event

    return events()


@hookimpl
def llmplex_parse(raw: Any, request: Request) -> Response:
    """The core response for a ``Message``: the lean path's decoded JSON or the SDK's model."""
    return parse_message(raw, request)


@hookimpl
def llmplex_parse_event(raw_event: Any, state: StreamState) -> list[StreamEvent]:
    """Core stream events for one raw SDK stream event."""
    return parse_stream_event(raw_event, state)


@hookimpl
def llmplex_tool_declarations(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """Each tool as the Messages API declares it (``input_schema``)."""
    return [tool_declaration(tool) for tool in tools]


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """Map SDK exceptions; ``None`` lets core's fallback handle the rest."""
    return classify_error(error)


@hookimpl
def llmplex_batch_limits(settings: AnthropicSettings) -> BatchLimits:
    """``batch_max_requests`` and ``batch_max_bytes`` of the instance (Anthropic: 100,000 and 256 MB)."""
    return batch.batch_limits(settings)


@hookimpl
def llmplex_batch_submit(requests: Sequence[BatchRequest], client: anthropic.Anthropic) -> str:
    """Create a Message Batch of the requests."""
    return batch.submit_batch(client, requests)


@hookimpl
def llmplex_batch_poll(batch_id: str, client: anthropic.Anthropic) -> BatchStatus:
    """The batch's processing status and request counts."""
    return batch.poll_batch(client, batch_id)


@hookimpl
def llmplex_batch_results(batch_id: str, client: anthropic.Anthropic) -> Iterator[BatchOutcome]:
    """The batch's result lines."""
    return batch.batch_results(client, batch_id)


@hookimpl
def llmplex_models(client: anthropic.Anthropic) -> list[ModelInfo]:
    """``GET /v1/models`` (every page): ids, display names and, where the API gives them, token limits."""
    return [
        ModelInfo(
            id=model.id,
            context_window=getattr(model, "max_input_tokens", None),
            max_output_tokens=getattr(model, "max_tokens", None),
            description=model.display_name or "",
        )
        for model in client.models.list()
    ]


_COUNTED = ("model", "messages", "system", "tools", "tool_choice", "thinking")
"""The payload keys the Messages API's token count takes (``max_tokens`` and sampling options it refuses)."""


@hookimpl
async def llmplex_acount_tokens(
    request: Request, settings: AnthropicSettings, client: anthropic.AsyncAnthropic
) -> tuple[int, str]:
    """The API's own count (``POST /v1/messages/count_tokens``) of the payload ``request`` would send."""
    payload = format_request(request, settings)
    counted = await client.messages.count_tokens(**{k: payload[k] for k in _COUNTED if k in payload})
    return counted.input_tokens, "provider"
