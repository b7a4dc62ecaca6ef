"""The hookimpls of the ``openai`` plugin: OpenAI and any OpenAI-compatible server.

Each provider instance speaks one API, chosen by its ``api`` setting: the
Responses API (default for OpenAI itself) or Chat Completions (default for any
other ``base_url``). Another instance of this plugin is one config table away::

    [providers.local]
    plugin = "openai"
    base_url = "http://127.0.0.1:8080/v1"
    api = "chat"

Reusable pieces, stable names, for plugins that talk to OpenAI-compatible servers
(``llmplex-llamacpp``) instead of duplicating the translation:

- ``llmplex_openai.chat.format_chat_request`` ``(request, *, max_tokens_key=...) -> dict``
- ``llmplex_openai.chat.parse_chat_response`` ``(raw, request) -> Response`` (``raw``: the decoded
  JSON, or a ``ChatCompletion``)
- ``llmplex_openai.chat.parse_chat_event`` ``(chunk, state) -> list[StreamEvent]`` (``chunk``: the decoded
  JSON, or a ``ChatCompletionChunk``)
- ``llmplex_openai.chat.tool_declaration`` ``(tool) -> dict`` (and ``responses.tool_declaration``)
- ``llmplex_openai.errors.classify_error`` ``(error) -> LLMError | None``
- ``llmplex_openai.transport.send_chat`` / ``asend_chat`` ``(client, payload, timeout)``
  (the answer's decoded JSON, or the stream of its decoded chunks when ``payload["stream"]``)
- ``llmplex_openai.clients.make_client`` / ``make_async_client`` ``(base_url, api_key=None, ...)``
  and ``llmplex_openai.clients.request_timeout``
- the Responses API twins in ``llmplex_openai.responses`` and ``transport.send_responses``.
- ``llmplex_openai.embeddings.embed`` / ``aembed`` and ``list_models`` (``/embeddings``, ``/models``).

Provider-native batches (``llmplex batch --provider-batch``) go through the Batch
API of the instance's API: ``llmplex_openai.batch``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

import openai
from openai import AsyncOpenAI, OpenAI

from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.hookspecs import hookimpl
from llmplex.provider import Capabilities, ProviderInfo
from llmplex.types import (
    BatchLimits,
    BatchOutcome,
    BatchRequest,
    BatchStatus,
    Embeddings,
    ModelInfo,
    Request,
    Response,
    StreamEvent,
    StreamState,
    Tool,
)
from llmplex_openai import batch, chat, embeddings, reasoning, responses, transport
from llmplex_openai.clients import create_async_client, create_client, request_timeout
from llmplex_openai.errors import classify_error
from llmplex_openai.settings import OPENAI_BASE_URL, OpenAISettings
from llmplex_openai.wire_json import as_json

EMBEDDING_BATCH_SIZE = 2048
"""The most inputs one ``/embeddings`` request takes."""


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register the ``openai`` prefix (config instances reuse it under their own prefix)."""
    register(
        ProviderInfo(
            name="openai",
            settings_model=OpenAISettings,
            capabilities=Capabilities(
                streaming=True,
                tools=True,
                native_structured_output=True,
                response_chains=True,
                delete_response=True,
                embeddings=True,
                embedding_dimensions=True,
                embedding_batch_size=EMBEDDING_BATCH_SIZE,
                input_parts=frozenset({"image", "document", "audio"}),
                prompt_cache=True,
                reasoning_formats=frozenset({reasoning.FORMAT}),
            ),
            default_model="gpt-4o-mini",
            default_embedding_model="text-embedding-3-small",
            create_client=create_client,
            create_async_client=create_async_client,
            description="OpenAI (Responses or Chat Completions API) and OpenAI-compatible servers.",
        )
    )


def _max_tokens_key(settings: OpenAISettings) -> str:
    return "max_completion_tokens" if settings.is_openai else "max_tokens"


@hookimpl
def llmplex_format(request: Request, settings: OpenAISettings) -> dict[str, Any]:
    """The JSON body for the API this instance speaks; with ``prompt_cache="auto"``, OpenAI's own API gets a
    ``prompt_cache_key`` naming the stable prefix (unless ``provider_options`` give one)."""
    if settings.effective_api == "chat":
        payload = chat.format_chat_request(request, max_tokens_key=_max_tokens_key(settings))
    else:
        payload = responses.format_responses_request(request)
    if request.prompt_cache == "auto" and settings.is_openai:
        payload.setdefault("prompt_cache_key", reasoning.prompt_cache_key(request))
    return payload


@hookimpl
def llmplex_call(payload: dict[str, Any], settings: OpenAISettings, client: OpenAI, timeout: float | None) -> Any:
    """Send synchronously; the SDK's exceptions propagate for ``llmplex_classify_error``.

    With ``payload["stream"]`` it returns the stream of raw events (chat chunks or Responses API events,
    decoded JSON), so this is ``llmplex_stream`` too.
    """
    send = transport.send_chat if settings.effective_api == "chat" else transport.send_responses
    return send(client, payload, request_timeout(timeout, settings.timeout))


@hookimpl
def llmplex_acall(
    payload: dict[str, Any], settings: OpenAISettings, client: AsyncOpenAI, timeout: float | None
) -> Awaitable[Any]:
    """Async twin of ``llmplex_call`` (``llmplex_astream`` too): what to await (no coroutine of its own: one frame
    fewer on every resumption of the call)."""
    asend = transport.asend_chat if settings.effective_api == "chat" else transport.asend_responses
    return asend(client, payload, request_timeout(timeout, settings.timeout))


# Whether the SDK streams is the payload's own "stream", so one send serves both hooks.
llmplex_stream = llmplex_call
llmplex_astream = llmplex_acall


@hookimpl
def llmplex_parse(raw: Any, request: Request, settings: OpenAISettings) -> Response:
    """The answer of the API this instance speaks (decoded JSON, or an SDK model) as a core Response."""
    if settings.effective_api == "chat":
        return chat.parse_chat_response(raw, request)
    return responses.parse_responses_response(raw, request)


@hookimpl
def llmplex_parse_event(raw_event: Any, state: StreamState) -> list[StreamEvent]:
    """One raw stream event (decoded JSON, or an SDK model) as core stream events; Responses API events have a
    ``type``, chat chunks none."""
    event = as_json(raw_event)
    if "type" in event:
        return responses.parse_responses_event(event, state)
    return chat.parse_chat_event(event, state)


@hookimpl
def llmplex_tool_declarations(tools: Sequence[Tool], settings: OpenAISettings) -> list[dict[str, Any]]:
    """Each tool as the API this instance speaks declares it."""
    declare = chat.tool_declaration if settings.effective_api == "chat" else responses.tool_declaration
    return [declare(tool) for tool in tools]


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """The SDK's exceptions in the core taxonomy; ``None`` for anything else."""
    return classify_error(error)


@hookimpl
def llmplex_delete_response(response_id: str, settings: OpenAISettings, client: OpenAI) -> bool:
    """Delete a stored Responses API response; ``False`` when the server does not know it."""
    if settings.effective_api != "responses":
        raise LLMConfigurationError('deleting a stored response needs the Responses API (api = "responses")')
    try:
        client.responses.delete(response_id)
    except openai.NotFoundError:
        return False
    except openai.OpenAIError as exc:
        raise (classify_error(exc) or LLMError(str(exc))) from exc
    return True


@hookimpl
def llmplex_batch_limits(settings: OpenAISettings) -> BatchLimits:
    """``batch_max_requests`` and ``batch_max_bytes`` of the instance (OpenAI: 50,000 and 200 MB)."""
    return batch.batch_limits(settings)


@hookimpl
def llmplex_batch_submit(requests: Sequence[BatchRequest], label: str, settings: OpenAISettings, client: OpenAI) -> str:
    """Upload the requests as a JSONL file (purpose ``batch``) and create a batch on the instance's API."""
    return batch.submit_batch(client, requests, label, settings)


@hookimpl
def llmplex_batch_find(label: str, client: OpenAI) -> str | None:
    """The batch whose metadata carries ``label``."""
    return batch.find_batch(client, label)


@hookimpl
def llmplex_batch_poll(batch_id: str, client: OpenAI) -> BatchStatus:
    """The batch's status and request counts."""
    return batch.poll_batch(client, batch_id)


@hookimpl
def llmplex_batch_results(batch_id: str, client: OpenAI) -> Iterator[BatchOutcome]:
    """The lines of the batch's output and error files."""
    return batch.batch_results(client, batch_id)


@hookimpl
def llmplex_embed(
    texts: Sequence[str],
    model: str,
    dimensions: int | None,
    settings: OpenAISettings,
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
    settings: OpenAISettings,
    client: AsyncOpenAI,
    timeout: float | None,
) -> Embeddings:
    """Async twin of ``llmplex_embed``."""
    return await embeddings.aembed(client, texts, model, dimensions, request_timeout(timeout, settings.timeout))


@hookimpl
def llmplex_models(client: OpenAI) -> list[ModelInfo]:
    """``GET /models``: every model id the server lists."""
    return embeddings.list_models(client)


_COUNTED = ("model", "input", "instructions", "tools", "tool_choice", "reasoning", "text", "parallel_tool_calls")
"""The Responses payload keys OpenAI's input-token count takes."""


@hookimpl
async def llmplex_acount_tokens(
    request: Request, settings: OpenAISettings, client: AsyncOpenAI
) -> tuple[int, str] | None:
    """OpenAI's own count (``POST /v1/responses/input_tokens``) of the request as the Responses API reads it;
    ``None`` for another server behind this plugin (a base URL that is not OpenAI's has no such endpoint)."""
    if settings.url.rstrip("/") != OPENAI_BASE_URL:
        return None
    payload = responses.format_responses_request(request)
    counted = await client.responses.input_tokens.count(**{key: payload[key] for key in _COUNTED if key in payload})
    return counted.input_tokens, "provider"
