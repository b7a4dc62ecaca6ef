"""The ``vertex`` provider: Gemini models through google-genai's Vertex mode, Claude models through
``AnthropicVertex``; each family's request, answer, stream and error translation is its own plugin's.

A model whose name starts with ``claude`` is Anthropic's (``vertex:claude-sonnet-4-5@20250929``); any
other is Google's (``vertex:gemini-2.5-flash``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from llmplex_anthropic import hooks as claude
from llmplex_anthropic.settings import AnthropicSettings
from llmplex_gemini import hooks as gemini
from llmplex_gemini.settings import GeminiSettings

from llmplex.errors import LLMError
from llmplex.hookspecs import hookimpl
from llmplex.provider import ProviderInfo
from llmplex.types import Embeddings, Request, Response, StreamEvent, StreamState
from llmplex_vertex.clients import VertexClients, close_clients, create_async_clients, create_clients
from llmplex_vertex.families import GEMINI_ON_VERTEX
from llmplex_vertex.settings import VertexSettings, family_of

DEFAULT_MODEL = "gemini-2.5-flash"


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register the ``vertex`` prefix (its capabilities are the Gemini side's; Claude's differ per model)."""
    register(
        ProviderInfo(
            name="vertex",
            settings_model=VertexSettings,
            capabilities=GEMINI_ON_VERTEX,
            default_model=DEFAULT_MODEL,
            default_embedding_model="gemini-embedding-001",
            create_client=create_clients,
            create_async_client=create_async_clients,
            close_client=close_clients,
            description="Google Vertex AI: Gemini (google-genai) and Claude (AnthropicVertex) models, ADC auth.",
        )
    )


def _gemini_settings(settings: VertexSettings) -> GeminiSettings:
    return GeminiSettings(timeout=settings.timeout, model=settings.model)


def _claude_settings(settings: VertexSettings) -> AnthropicSettings:
    return AnthropicSettings(timeout=settings.timeout)


def _is_claude(model: str) -> bool:
    return family_of(model) == "anthropic"


@hookimpl
def llmplex_format(request: Request, settings: VertexSettings) -> dict[str, Any]:
    """The family's payload: ``messages.create`` keyword arguments for Claude, ``generate_content``'s for Gemini."""
    model = settings.model or request.model
    if _is_claude(model):
        return claude.llmplex_format(request.model_copy(update={"model": model}), _claude_settings(settings))
    return gemini.llmplex_format(request, _gemini_settings(settings))


@hookimpl
def llmplex_call(
    payload: dict[str, Any], settings: VertexSettings, client: VertexClients, timeout: float | None
) -> Any:
    """One ``:rawPredict`` (Claude) or ``:generateContent`` (Gemini) call."""
    if _is_claude(payload["model"]):
        return claude.llmplex_call(payload, _claude_settings(settings), client.anthropic, timeout)
    return gemini.llmplex_call(payload, _gemini_settings(settings), client.gemini, timeout)


@hookimpl
async def llmplex_acall(
    payload: dict[str, Any], settings: VertexSettings, client: VertexClients, timeout: float | None
) -> Any:
    """Async twin of ``llmplex_call``."""
    if _is_claude(payload["model"]):
        return await claude.llmplex_acall(payload, _claude_settings(settings), client.anthropic, timeout)
    return await gemini.llmplex_acall(payload, _gemini_settings(settings), client.gemini, timeout)


@hookimpl
def llmplex_stream(
    payload: dict[str, Any], settings: VertexSettings, client: VertexClients, timeout: float | None
) -> Iterator[Any]:
    """The raw events of one ``:streamRawPredict`` or ``:streamGenerateContent`` call."""
    if _is_claude(payload["model"]):
        return claude.llmplex_stream(payload, _claude_settings(settings), client.anthropic, timeout)
    return gemini.llmplex_stream(payload, _gemini_settings(settings), client.gemini, timeout)


@hookimpl
async def llmplex_astream(
    payload: dict[str, Any], settings: VertexSettings, client: VertexClients, timeout: float | None
) -> AsyncIterator[Any]:
    """Async twin of ``llmplex_stream``."""
    if _is_claude(payload["model"]):
        return await claude.llmplex_astream(payload, _claude_settings(settings), client.anthropic, timeout)
    return await gemini.llmplex_astream(payload, _gemini_settings(settings), client.gemini, timeout)


@hookimpl
def llmplex_parse(raw: Any, request: Request) -> Response:
    """The core response, read by the family's own parser."""
    if _is_claude(request.model):
        return claude.llmplex_parse(raw, request)
    return gemini.llmplex_parse(raw, request)


@hookimpl
def llmplex_parse_event(raw_event: Any, state: StreamState) -> list[StreamEvent]:
    """Core stream events, read by the family's own parser."""
    if _is_claude(state.request.model):
        return claude.llmplex_parse_event(raw_event, state)
    return gemini.llmplex_parse_event(raw_event, state)


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """Either SDK's exceptions, classified as their own plugins do; ``None`` for anything else."""
    return claude.llmplex_classify_error(error) or gemini.llmplex_classify_error(error)


@hookimpl
def llmplex_embed(
    texts: Sequence[str],
    model: str,
    dimensions: int | None,
    settings: VertexSettings,
    client: VertexClients,
    timeout: float | None,
) -> Embeddings:
    """Gemini embeddings on Vertex (``embed_content``)."""
    return gemini.llmplex_embed(texts, model, dimensions, _gemini_settings(settings), client.gemini, timeout)


@hookimpl
async def llmplex_aembed(
    texts: Sequence[str],
    model: str,
    dimensions: int | None,
    settings: VertexSettings,
    client: VertexClients,
    timeout: float | None,
) -> Embeddings:
    """Async twin of ``llmplex_embed``."""
    return await gemini.llmplex_aembed(texts, model, dimensions, _gemini_settings(settings), client.gemini, timeout)


@hookimpl
async def llmplex_acount_tokens(
    request: Request, settings: VertexSettings, client: VertexClients
) -> tuple[int, str] | None:
    """Vertex AI's own count, by the family's: Claude's ``count-tokens``, Gemini's ``countTokens``."""
    model = settings.model or request.model
    if _is_claude(model):
        counted = request.model_copy(update={"model": model})
        return await claude.llmplex_acount_tokens(counted, _claude_settings(settings), client.anthropic)
    return await gemini.llmplex_acount_tokens(request, _gemini_settings(settings), client.gemini)
