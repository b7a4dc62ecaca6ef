"""The hookimpls of the OpenAI-compatible presets: ``mistral:``, ``groq:``, ``deepseek:``, ``openrouter:``,
``xai:``, ``together:``, ``fireworks:``, ``ollama:``, ``vllm:``, ``lmstudio:`` and ``openai-compatible``.

Every prefix is an entry point to this module; each registers one provider
from the preset table (``presets.PRESETS``). The translation is the openai
plugin's Chat Completions one, reused; the hooks apply each API's documented
differences (``quirks``). A provider of one's own needs config alone::

    [providers.cerebras]
    plugin = "openai-compatible"
    base_url = "https://api.cerebras.ai/v1"
    api_key_env = "CEREBRAS_API_KEY"
    unsupported_options = ["presence_penalty"]
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import openai
from llmplex_openai import chat, embeddings, transport
from llmplex_openai.clients import request_timeout
from llmplex_openai.errors import classify_error
from llmplex_openai.wire_json import as_json
from openai import AsyncOpenAI, OpenAI

from llmplex.errors import LLMError, LLMQuotaExhaustedError
from llmplex.hookspecs import hookimpl
from llmplex.provider import Capabilities, ProviderInfo
from llmplex.types import Embeddings, ModelInfo, Request, Response, StreamEvent, StreamState, Tool
from llmplex_openai_compatible import quirks
from llmplex_openai_compatible.clients import create_async_client, create_client
from llmplex_openai_compatible.models import list_models
from llmplex_openai_compatible.presets import GENERIC, PRESETS, Preset
from llmplex_openai_compatible.settings import SETTINGS_MODELS, CompatibleSettings

EMBEDDING_BATCH_SIZE = 128
"""Texts per ``/embeddings`` request (within every preset's documented limit)."""


def provider_info(preset: Preset) -> ProviderInfo:
    """The ``ProviderInfo`` a preset registers."""
    where = "a local server, no key" if preset.local else f"key from {preset.key_env}"
    return ProviderInfo(
        name=preset.name,
        settings_model=SETTINGS_MODELS[preset.name],
        capabilities=Capabilities(
            streaming=True,
            tools=True,
            native_structured_output=preset.native_structured_output,
            embeddings=preset.embeddings,
            embedding_batch_size=EMBEDDING_BATCH_SIZE,
            input_parts=frozenset({"image"}) if preset.vision else frozenset(),
        ),
        default_model=preset.default_model,
        default_embedding_model=preset.default_embedding_model,
        create_client=create_client,
        create_async_client=create_async_client,
        description=f"{preset.title} (OpenAI-compatible Chat Completions at {preset.base_url or 'base_url'}; {where}).",
    )


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register every preset and the preset-less ``openai-compatible``."""
    for preset in (*PRESETS.values(), GENERIC):
        register(provider_info(preset))


@hookimpl
def llmplex_format(request: Request, settings: CompatibleSettings) -> dict[str, Any]:
    """The Chat Completions body as this API takes it (refusing by name what it does not)."""
    return quirks.format_request(request, settings)


@hookimpl
def llmplex_call(payload: dict[str, Any], settings: CompatibleSettings, client: OpenAI, timeout: float | None) -> Any:
    """``POST /chat/completions`` (a stream when ``payload["stream"]``, so this is ``llmplex_stream`` too)."""
    return transport.send_chat(client, payload, request_timeout(timeout, settings.timeout))


@hookimpl
def llmplex_acall(
    payload: dict[str, Any], settings: CompatibleSettings, client: AsyncOpenAI, timeout: float | None
) -> Awaitable[Any]:
    """Async twin of ``llmplex_call``: what to await (no coroutine of its own: one frame fewer on every resumption
    of the call)."""
    return transport.asend_chat(client, payload, request_timeout(timeout, settings.timeout))


llmplex_stream = llmplex_call
llmplex_astream = llmplex_acall


@hookimpl
def llmplex_parse(raw: Any, request: Request) -> Response:
    """The chat completion as a core Response, a reasoning model's thinking as its reasoning part."""
    response = chat.parse_chat_response(raw, request)
    choices = as_json(raw).get("choices") or [{}]
    reasoning = quirks.reasoning_of(choices[0].get("message") or {})
    return response.model_copy(update={"reasoning": reasoning}) if reasoning else response


@hookimpl
def llmplex_parse_event(raw_event: Any, state: StreamState) -> list[StreamEvent]:
    """One chunk as core stream events, thinking deltas as ``reasoning`` events."""
    reasoning = quirks.reasoning_events(raw_event, state)
    events = chat.parse_chat_event(raw_event, state)
    return reasoning + events if reasoning else events


@hookimpl
def llmplex_tool_declarations(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """Each tool as Chat Completions declares it."""
    return [chat.tool_declaration(tool) for tool in tools]


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """The openai SDK's exceptions in the core taxonomy; HTTP 402, which OpenRouter ("insufficient credits") and
    DeepSeek ("Insufficient Balance") answer when the account is out of credit, is an exhausted quota."""
    if isinstance(error, openai.APIStatusError) and error.status_code == 402:
        return LLMQuotaExhaustedError(
            f"HTTP 402: {error.message} (the account is out of credit: top it up; retrying will not help)",
            status_code=402,
            response_body=error.body,
            request_id=error.request_id,
            cause=error,
        )
    return classify_error(error)


@hookimpl
def llmplex_embed(
    texts: Sequence[str],
    model: str,
    dimensions: int | None,
    settings: CompatibleSettings,
    client: OpenAI,
    timeout: float | None,
) -> Embeddings:
    """``POST /embeddings`` for one batch."""
    return embeddings.embed(client, texts, model, dimensions, request_timeout(timeout, settings.timeout))


@hookimpl
async def llmplex_aembed(
    texts: Sequence[str],
    model: str,
    dimensions: int | None,
    settings: CompatibleSettings,
    client: AsyncOpenAI,
    timeout: float | None,
) -> Embeddings:
    """Async twin of ``llmplex_embed``."""
    return await embeddings.aembed(client, texts, model, dimensions, request_timeout(timeout, settings.timeout))


@hookimpl
def llmplex_models(settings: CompatibleSettings, client: OpenAI) -> list[ModelInfo]:
    """What the server serves: Ollama's pulled models (``/api/tags``), else ``GET /models``."""
    return list_models(settings, client)
