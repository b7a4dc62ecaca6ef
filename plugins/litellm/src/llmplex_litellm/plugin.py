"""The hookimpls of the ``litellm`` plugin: ``litellm:<provider>/<model>`` through LiteLLM.

This module imports no LiteLLM: the client factory does, on the first request.
Another instance is one config table away, e.g. an OpenAI-compatible server::

    [providers.mylocal]
    plugin = "litellm"
    api_base = "http://127.0.0.1:8080/v1"
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from llmplex.errors import LLMError
from llmplex.hookspecs import hookimpl
from llmplex.provider import Capabilities, ProviderInfo
from llmplex.types import Embeddings, ModelInfo, Request, Response, StreamEvent, StreamState, Tool
from llmplex_litellm import embeddings
from llmplex_litellm.errors import classify_error
from llmplex_litellm.format import format_request, tool_declaration
from llmplex_litellm.parse import parse_chunk, parse_response
from llmplex_litellm.sdk import LiteLLMClient, create_async_client, create_client
from llmplex_litellm.settings import LiteLLMSettings


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register the ``litellm`` prefix."""
    register(
        ProviderInfo(
            name="litellm",
            settings_model=LiteLLMSettings,
            capabilities=Capabilities(
                streaming=True,
                tools=True,
                native_structured_output=True,
                embeddings=True,
                embedding_dimensions=True,
                embedding_batch_size=embeddings.EMBEDDING_BATCH_SIZE,
                input_parts=frozenset({"image", "document", "audio"}),
            ),
            default_model="openai/gpt-4o-mini",
            default_embedding_model="openai/text-embedding-3-small",
            create_client=create_client,
            create_async_client=create_async_client,
            description="LiteLLM's 100+ providers: litellm:<provider>/<model> (LiteLLM imported on first use).",
        )
    )


@hookimpl
def llmplex_format(request: Request) -> dict[str, Any]:
    """LiteLLM's OpenAI-style keyword arguments for ``request``."""
    return format_request(request)


@hookimpl
def llmplex_call(payload: dict[str, Any], client: LiteLLMClient, timeout: float | None) -> Any:
    """``litellm.completion`` with LiteLLM's retries off; its exceptions propagate for classification."""
    return client.completion(payload, timeout)


@hookimpl
async def llmplex_acall(payload: dict[str, Any], client: LiteLLMClient, timeout: float | None) -> Any:
    """``litellm.acompletion``."""
    return await client.acompletion(payload, timeout)


@hookimpl
def llmplex_stream(payload: dict[str, Any], client: LiteLLMClient, timeout: float | None) -> Iterator[Any]:
    """LiteLLM's chunk stream."""
    stream: Iterator[Any] = client.completion(payload, timeout)
    return stream


@hookimpl
async def llmplex_astream(payload: dict[str, Any], client: LiteLLMClient, timeout: float | None) -> AsyncIterator[Any]:
    """LiteLLM's async chunk stream."""
    stream: AsyncIterator[Any] = await client.acompletion(payload, timeout)
    return stream


@hookimpl
def llmplex_parse(raw: Any, request: Request) -> Response:
    """A ``ModelResponse`` as a core Response."""
    return parse_response(raw, request)


@hookimpl
def llmplex_parse_event(raw_event: Any, state: StreamState) -> list[StreamEvent]:
    """One ``ModelResponseStream`` chunk as core stream events."""
    return parse_chunk(raw_event, state)


@hookimpl
def llmplex_tool_declarations(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """Each tool in the Chat Completions shape LiteLLM translates for its providers."""
    return [tool_declaration(tool) for tool in tools]


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """LiteLLM's exceptions in the core taxonomy; ``None`` for anything else."""
    return classify_error(error)


@hookimpl
def llmplex_embed(
    texts: Sequence[str], model: str, dimensions: int | None, client: LiteLLMClient, timeout: float | None
) -> Embeddings:
    """``litellm.embedding`` for one batch (``dimensions`` where LiteLLM's provider takes it)."""
    raw = client.embedding(embeddings.embedding_payload(texts, model, dimensions), timeout)
    return embeddings.parse_embeddings(raw, model)


@hookimpl
async def llmplex_aembed(
    texts: Sequence[str], model: str, dimensions: int | None, client: LiteLLMClient, timeout: float | None
) -> Embeddings:
    """``litellm.aembedding``."""
    raw = await client.aembedding(embeddings.embedding_payload(texts, model, dimensions), timeout)
    return embeddings.parse_embeddings(raw, model)


@hookimpl
def llmplex_models(client: LiteLLMClient) -> list[ModelInfo]:
    """LiteLLM's ``model_cost`` map: context window, max output, mode and supports_* flags per model."""
    return embeddings.list_models(client.litellm.model_cost)
