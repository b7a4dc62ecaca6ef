"""The hookimpls of the ``azure`` provider: ``azure:DEPLOYMENT`` on an Azure OpenAI resource.

Chat Completions goes to ``{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...``
(``api = "chat"``, the default), the Responses API to the v1 API's
``{endpoint}/openai/v1/responses`` (``api = "responses"``), both through the
openai SDK's ``AzureOpenAI`` clients with the ``api-key`` header or a Microsoft
Entra ID token. The translation is the openai plugin's; Azure's own part is
its content filter, whose blocks are refusals naming their categories.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from llmplex_openai import chat, embeddings, responses
from llmplex_openai.clients import request_timeout
from llmplex_openai.wire_json import as_json
from openai import AsyncAzureOpenAI, AzureOpenAI

from llmplex.errors import LLMError
from llmplex.hookspecs import hookimpl
from llmplex.provider import Capabilities, ProviderInfo
from llmplex.types import Embeddings, Request, Response, StreamEvent, StreamState, Tool
from llmplex_azure import transport
from llmplex_azure.clients import create_async_client, create_client
from llmplex_azure.errors import classify_error, refusal
from llmplex_azure.settings import AzureSettings


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Register the ``azure`` prefix."""
    register(
        ProviderInfo(
            name="azure",
            settings_model=AzureSettings,
            capabilities=Capabilities(
                streaming=True,
                tools=True,
                native_structured_output=True,
                response_chains=True,
                embeddings=True,
                embedding_dimensions=True,
                embedding_batch_size=2048,
                input_parts=frozenset({"image"}),
                prompt_cache=True,
                reasoning_formats=frozenset({"openai-responses"}),
            ),
            create_client=create_client,
            create_async_client=create_async_client,
            description="Azure OpenAI (azure:DEPLOYMENT; Chat Completions on deployments or the v1 Responses API; "
            "AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY or Microsoft Entra ID).",
        )
    )


@hookimpl
def llmplex_format(request: Request, settings: AzureSettings) -> dict[str, Any]:
    """The JSON body for the API this instance speaks (the deployment's name is the ``model``)."""
    if settings.api == "chat":
        return chat.format_chat_request(request, max_tokens_key="max_completion_tokens")
    return responses.format_responses_request(request)


@hookimpl
def llmplex_call(payload: dict[str, Any], settings: AzureSettings, client: AzureOpenAI, timeout: float | None) -> Any:
    """Send through the SDK (a stream when ``payload["stream"]``, so this is ``llmplex_stream`` too)."""
    return transport.send(client, settings.api, payload, request_timeout(timeout, settings.timeout))


@hookimpl
def llmplex_acall(
    payload: dict[str, Any], settings: AzureSettings, client: AsyncAzureOpenAI, timeout: float | None
) -> Awaitable[Any]:
    """Async twin of ``llmplex_call``: what to await (no coroutine of its own: one frame fewer on every resumption
    of the call)."""
    return transport.asend(client, settings.api, payload, request_timeout(timeout, settings.timeout))


llmplex_stream = llmplex_call
llmplex_astream = llmplex_acall


def _filtered(choice: Any) -> Any:
    """The content-filter results of a choice the filter ended, else ``None``."""
    data = as_json(choice)
    if (type(data) is dict or isinstance(data, Mapping)) and data.get("finish_reason") == "content_filter":
        return data.get("content_filter_results") or {}
    return None


@hookimpl
def llmplex_parse(raw: Any, request: Request, settings: AzureSettings) -> Response:
    """The answer as a core Response; an answer the content filter ended is a refusal naming its categories."""
    if settings.api == "responses":
        return responses.parse_responses_response(raw, request)
    choices = as_json(raw).get("choices") or [None]
    results = _filtered(choices[0])
    if results is not None:
        raise refusal(results, "the answer")
    return chat.parse_chat_response(raw, request)


@hookimpl
def llmplex_parse_event(raw_event: Any, state: StreamState) -> list[StreamEvent]:
    """One stream event as core events; a chunk the content filter ended raises a refusal."""
    choices = getattr(raw_event, "choices", None)
    if choices is None:
        return responses.parse_responses_event(raw_event, state)
    results = _filtered(choices[0]) if choices else None
    if results is not None:
        raise refusal(results, "the answer")
    return chat.parse_chat_event(raw_event, state)


@hookimpl
def llmplex_tool_declarations(tools: Sequence[Tool], settings: AzureSettings) -> list[dict[str, Any]]:
    """Each tool as the API this instance speaks declares it."""
    declare = chat.tool_declaration if settings.api == "chat" else responses.tool_declaration
    return [declare(tool) for tool in tools]


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """Content-filter blocks as refusals with their categories; the rest as the openai plugin maps them."""
    return classify_error(error)


@hookimpl
def llmplex_embed(
    texts: Sequence[str],
    model: str,
    dimensions: int | None,
    settings: AzureSettings,
    client: AzureOpenAI,
    timeout: float | None,
) -> Embeddings:
    """``POST /openai/deployments/{deployment}/embeddings`` for one batch."""
    name = transport.deployment(model)
    return embeddings.embed(client, texts, name, dimensions, request_timeout(timeout, settings.timeout))


@hookimpl
async def llmplex_aembed(
    texts: Sequence[str],
    model: str,
    dimensions: int | None,
    settings: AzureSettings,
    client: AsyncAzureOpenAI,
    timeout: float | None,
) -> Embeddings:
    """Async twin of ``llmplex_embed``."""
    name = transport.deployment(model)
    return await embeddings.aembed(client, texts, name, dimensions, request_timeout(timeout, settings.timeout))
