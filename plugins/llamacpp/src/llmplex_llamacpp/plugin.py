"""The hookimpls of the ``llamacpp`` provider: ``llamacpp:qwen2.5-coder-1.5b`` or ``llamacpp:/path/model.gguf``.

The server is llama.cpp's own (OpenAI-compatible Chat Completions); every
translation is the OpenAI plugin's, reused, not repeated. Embeddings come from
the built-in ONNX model (``llamacpp:all-minilm-l6-v2``, in this process) or,
for a ``.gguf`` path, from a llama.cpp embedding server through ``/v1/embeddings``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from llmplex_openai import chat, embeddings, transport
from llmplex_openai.clients import request_timeout
from llmplex_openai.errors import classify_error

from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.hookspecs import hookimpl
from llmplex.provider import Capabilities, ProviderInfo
from llmplex.types import Embeddings, LLMConfig, ModelInfo, Request, Response, StreamEvent, StreamState, Tool, Usage
from llmplex_llamacpp.catalogue import DEFAULT_MODEL, MODELS
from llmplex_llamacpp.counting import count_prompt_tokens
from llmplex_llamacpp.embedding_models import DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODELS, find_embedding_model
from llmplex_llamacpp.errors import LocalModelError
from llmplex_llamacpp.local_clients import AsyncLocalClients, LocalClients
from llmplex_llamacpp.model_files import model_label
from llmplex_llamacpp.settings import LlamaCppSettings

EMBEDDING_BATCH_SIZE = 32
SAMPLING_OPTIONS = frozenset(LLMConfig.model_fields) - {"reasoning_effort"}
"""What llama.cpp's server takes: every sampling option but a reasoning effort, which it would ignore."""
"""Texts per batch: each batch is padded to its longest text, so small batches waste little on padding."""


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register the ``llamacpp`` prefix."""
    register(
        ProviderInfo(
            name="llamacpp",
            settings_model=LlamaCppSettings,
            capabilities=Capabilities(
                streaming=True,
                tools=True,
                native_structured_output=True,
                embeddings=True,
                embedding_batch_size=EMBEDDING_BATCH_SIZE,
                sampling_options=SAMPLING_OPTIONS,
            ),
            default_model=DEFAULT_MODEL,
            default_embedding_model=DEFAULT_EMBEDDING_MODEL,
            model_aliases={
                **{alias: model.name for model in MODELS for alias in model.aliases},
                **{alias: model.name for model in EMBEDDING_MODELS for alias in model.aliases},
            },
            create_client=LocalClients,
            create_async_client=AsyncLocalClients,
            description=f"Local llama.cpp server with a GGUF model ({DEFAULT_MODEL} from PyPI by default) "
            f"and a local embedding model ({DEFAULT_EMBEDDING_MODEL}); no API key.",
        )
    )


@hookimpl
def llmplex_format(request: Request, settings: LlamaCppSettings) -> dict[str, Any]:
    """The Chat Completions body, with the default answer length when none is given."""
    payload = chat.format_chat_request(request, max_tokens_key="max_tokens")
    payload.setdefault("max_tokens", settings.default_max_tokens)
    return payload


@hookimpl
def llmplex_call(
    payload: dict[str, Any], settings: LlamaCppSettings, client: LocalClients, timeout: float | None
) -> Any:
    """Send to the model's server, starting it on first use.

    With ``payload["stream"]`` the SDK returns its ``ChatCompletionChunk`` stream,
    so this is ``llmplex_stream`` too.
    """
    return transport.send_chat(client.sync(payload["model"]), payload, request_timeout(timeout, settings.timeout))


@hookimpl
async def llmplex_acall(
    payload: dict[str, Any], settings: LlamaCppSettings, client: AsyncLocalClients, timeout: float | None
) -> Any:
    """Async send (``llmplex_astream`` too); a server start runs in a worker thread."""
    sdk = await asyncio.to_thread(client.async_, payload["model"])
    return await transport.asend_chat(sdk, payload, request_timeout(timeout, settings.timeout))


# Whether the SDK streams is the payload's own "stream", so one send serves both hooks.
llmplex_stream = llmplex_call
llmplex_astream = llmplex_acall


@hookimpl
def llmplex_parse(raw: Any, request: Request) -> Response:
    """A ``ChatCompletion`` as a core Response, named by the model's short name, not the server's file path."""
    return chat.parse_chat_response(raw, request).model_copy(update={"model": model_label(request.model)})


@hookimpl
def llmplex_parse_event(raw_event: Any, state: StreamState) -> list[StreamEvent]:
    """One ``ChatCompletionChunk`` as core stream events (short model name too)."""
    label = model_label(state.request.model)
    return [
        event.model_copy(update={"model": label}) if event.model else event
        for event in chat.parse_chat_event(raw_event, state)
    ]


@hookimpl
def llmplex_embed(
    texts: Sequence[str],
    model: str,
    dimensions: int | None,
    settings: LlamaCppSettings,
    client: LocalClients,
    timeout: float | None,
) -> Embeddings:
    """A known embedding model runs here on onnxruntime; any other model (a ``.gguf``) on its embedding server."""
    known = find_embedding_model(model)
    if known is not None:
        from llmplex_llamacpp.onnx_embedder import OnnxEmbedder

        vectors, tokens = OnnxEmbedder.for_model(known).embed(texts)
        return Embeddings(vectors=vectors, usage=Usage(input_tokens=tokens, total_tokens=tokens), model=known.name)
    sdk = client.sync(model, embedding=True)
    result = embeddings.embed(sdk, texts, model, None, request_timeout(timeout, settings.timeout))
    return result.model_copy(update={"model": model_label(model)})


@hookimpl
def llmplex_tool_declarations(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """Each tool as Chat Completions declares it."""
    return [chat.tool_declaration(tool) for tool in tools]


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """A server that cannot start is a configuration problem; the rest is the OpenAI mapping."""
    if isinstance(error, LocalModelError):
        return LLMConfigurationError(str(error), cause=error)
    classified = classify_error(error)
    if classified is not None and _NO_POOLING in str(error):
        return LLMConfigurationError(
            "this GGUF declares no pooling, so llama.cpp cannot give one vector per text: set "
            '[providers.llamacpp] embedding_pooling = "mean" (or "last" for a decoder model) in the config',
            cause=error,
        )
    return classified


_NO_POOLING = "Pooling type 'none' is not OAI compatible"
"""What llama.cpp's /v1/embeddings answers (HTTP 400) for a model that declares no pooling."""


@hookimpl
def llmplex_models(settings: LlamaCppSettings) -> list[ModelInfo]:
    """The local models it serves by name, the default first; the context is the server's ``n_ctx``."""
    chat_models = [
        ModelInfo(
            id=model.name,
            context_window=settings.n_ctx,
            input_parts=("text",),
            features=("chat", "tools", "streaming") if model.instruct else ("completion",),
            description=f"{model.size / 1e6:.0f} MB GGUF, {model.licence}"
            + (", the default" if model.name == DEFAULT_MODEL else ""),
        )
        for model in MODELS
    ]
    embedding_models = [
        ModelInfo(
            id=model.name,
            context_window=model.max_tokens,
            input_parts=("text",),
            features=("embeddings",),
            description=f"{model.size / 1e6:.0f} MB ONNX, {model.dimensions} dimensions, {model.licence}"
            + (", the default embedding model" if model.name == DEFAULT_EMBEDDING_MODEL else ""),
        )
        for model in EMBEDDING_MODELS
    ]
    return chat_models + embedding_models


@hookimpl
async def llmplex_acount_tokens(
    request: Request, settings: LlamaCppSettings, client: AsyncLocalClients
) -> tuple[int, str]:
    """The model's own count: its chat template applied and tokenized by its llama.cpp server."""
    payload = llmplex_format(request, settings)
    sdk = await asyncio.to_thread(client.async_, payload["model"])
    return await count_prompt_tokens(str(sdk.base_url), payload), "tokenizer"
