"""The ``gemini`` provider: hook implementations on the official ``google-genai`` SDK."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any

from google import genai

from llmplex.errors import LLMError
from llmplex.hookspecs import hookimpl
from llmplex.provider import Capabilities, ProviderInfo
from llmplex.types import Embeddings, ModelInfo, Request, Response, StreamEvent, StreamState, Tool
from llmplex_gemini import embeddings, generate, plain, thoughts
from llmplex_gemini.clients import close_client, create_async_client, create_client, timeout_millis
from llmplex_gemini.counting import count_tokens
from llmplex_gemini.errors import classify_error
from llmplex_gemini.lean import prepare
from llmplex_gemini.request import format_request, tool_declaration, url_model
from llmplex_gemini.response import parse_response
from llmplex_gemini.settings import GeminiSettings
from llmplex_gemini.streaming import parse_chunk


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register the ``gemini`` prefix."""
    register(
        ProviderInfo(
            name="gemini",
            settings_model=GeminiSettings,
            capabilities=Capabilities(
                streaming=True,
                tools=True,
                native_structured_output=True,
                embeddings=True,
                embedding_dimensions=True,
                embedding_batch_size=embeddings.EMBEDDING_BATCH_SIZE,
                input_parts=frozenset({"image", "document", "audio"}),
                prompt_cache=True,
                reasoning_formats=frozenset({thoughts.FORMAT}),
            ),
            default_model="gemini-2.5-flash",
            default_embedding_model="gemini-embedding-001",
            create_client=create_client,
            create_async_client=create_async_client,
            close_client=close_client,
            description="Google Gemini (generateContent) on the official google-genai SDK.",
        )
    )


@hookimpl
def llmplex_format(request: Request, settings: GeminiSettings) -> dict[str, Any]:
    """The ``generate_content`` keyword arguments for ``request``."""
    return format_request(request, settings)


def _timeout(timeout: float | None, settings: GeminiSettings) -> float | None:
    configured = settings.timeout
    if timeout is None or configured is None:
        return configured if timeout is None else timeout
    return min(timeout, configured)


def _with_timeout(payload: dict[str, Any], timeout: float | None, settings: GeminiSettings) -> dict[str, Any]:
    """The SDK's arguments: the model as it goes into the URL (``url_model``), and a per-call timeout (the
    deadline's remaining seconds, capped by the configured one)."""
    payload = {**payload, "model": url_model(payload["model"])}
    chosen = _timeout(timeout, settings)
    if chosen is None:
        return payload
    config = {**payload["config"], "http_options": {"timeout": timeout_millis(chosen)}}
    return {**payload, "config": config}


@hookimpl
def llmplex_call(payload: dict[str, Any], settings: GeminiSettings, client: genai.Client, timeout: float | None) -> Any:
    """One ``generate_content`` call: lean (plain data) when the client and the payload allow it."""
    arguments = _with_timeout(payload, timeout, settings)
    lean = generate.prepare(client, arguments, is_async=False)
    if lean is not None:
        return lean.send()
    return client.models.generate_content(**arguments)


@hookimpl
def llmplex_acall(
    payload: dict[str, Any], settings: GeminiSettings, client: genai.Client, timeout: float | None
) -> Awaitable[Any]:
    """Async twin of ``llmplex_call``: what to await (no coroutine of its own: one frame fewer on every resumption
    of the call)."""
    arguments = _with_timeout(payload, timeout, settings)
    lean = generate.prepare(client, arguments, is_async=True)
    if lean is not None:
        return lean.asend()
    return client.aio.models.generate_content(**arguments)


@hookimpl
def llmplex_stream(
    payload: dict[str, Any], settings: GeminiSettings, client: genai.Client, timeout: float | None
) -> Iterator[Any]:
    """The chunks of one ``generate_content_stream`` call: read lean (plain data) when the client allows it."""
    arguments = _with_timeout(payload, timeout, settings)
    lean = prepare(client, arguments, is_async=False)
    if lean is not None:
        return lean.open()
    return client.models.generate_content_stream(**arguments)


@hookimpl
async def llmplex_astream(
    payload: dict[str, Any], settings: GeminiSettings, client: genai.Client, timeout: float | None
) -> AsyncIterator[Any]:
    """Async twin of ``llmplex_stream``."""
    arguments = _with_timeout(payload, timeout, settings)
    lean = prepare(client, arguments, is_async=True)
    if lean is not None:
        return await lean.aopen()
    return await client.aio.models.generate_content_stream(**arguments)


@hookimpl
def llmplex_parse(raw: Any, request: Request) -> Response:
    """The core response for a ``GenerateContentResponse`` (or the lean call's plain answer)."""
    if type(raw) is dict:
        return plain.parse_response(raw, request)
    return parse_response(raw, request)


@hookimpl
def llmplex_parse_event(raw_event: Any, state: StreamState) -> list[StreamEvent]:
    """Core stream events for one streamed chunk."""
    return parse_chunk(raw_event, state)


@hookimpl
def llmplex_tool_declarations(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """Each tool as a ``FunctionDeclaration``, the items of ``tools[0].function_declarations``."""
    return [tool_declaration(tool) for tool in tools]


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """Map SDK exceptions; ``None`` lets core's fallback handle the rest."""
    return classify_error(error)


@hookimpl
def llmplex_embed(
    texts: Sequence[str],
    model: str,
    dimensions: int | None,
    settings: GeminiSettings,
    client: genai.Client,
    timeout: float | None,
) -> Embeddings:
    """One ``embed_content`` call for a batch (``output_dimensionality`` from ``dimensions``)."""
    return embeddings.embed(client, texts, url_model(model), dimensions, _timeout(timeout, settings))


@hookimpl
async def llmplex_aembed(
    texts: Sequence[str],
    model: str,
    dimensions: int | None,
    settings: GeminiSettings,
    client: genai.Client,
    timeout: float | None,
) -> Embeddings:
    """Async twin of ``llmplex_embed``."""
    return await embeddings.aembed(client, texts, url_model(model), dimensions, _timeout(timeout, settings))


@hookimpl
def llmplex_models(client: genai.Client) -> list[ModelInfo]:
    """``models.list``: ids with input/output token limits and supported methods."""
    return embeddings.list_models(client)


@hookimpl
async def llmplex_acount_tokens(request: Request, settings: GeminiSettings, client: genai.Client) -> tuple[int, str]:
    """Gemini's own count (``countTokens``) of what ``request`` would send."""
    return await count_tokens(client, format_request(request, settings)), "provider"  # it encodes the model
