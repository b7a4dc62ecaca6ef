"""llmplex-echo: a provider plugin for a tiny JSON echo API, written as a third party would.

Wire format: ``POST {base_url}/v1/echo`` with ``{"model", "messages", "options"}``
answers ``{"id", "model", "text", "usage": {"input_tokens", "output_tokens"}, "finish_reason"}``
(``"stop"``, or ``"length"`` when ``max_tokens`` cut the text). With ``"stream": true``
it answers server-sent events: ``data: {"id", "model", "delta"}`` for each piece of
text, then ``event: done`` with ``data: {"id", "model", "usage", "finish_reason"}``.
Failures are an HTTP status with ``{"error": {"type", "message"}}``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
from pydantic import SecretStr

from llmplex.errors import LLMConfigurationError, LLMError
from llmplex.hookspecs import hookimpl
from llmplex.http import ServerSentEvent, aiter_sse, async_client, classify_http_error, iter_sse, sync_client
from llmplex.provider import Capabilities, ProviderInfo, ProviderSettings
from llmplex.types import Request, Response, StreamEvent, Usage


class EchoSettings(ProviderSettings):
    """``api_key`` (``ECHO_API_KEY``) and the API's ``base_url`` (``ECHO_BASE_URL``)."""

    env_vars = {"api_key": ("ECHO_API_KEY",), "base_url": ("ECHO_BASE_URL",)}

    api_key: SecretStr | None = None
    base_url: str = "https://api.echo.example"

    def problems(self) -> list[str]:
        """What ``llmplex providers`` reports missing before the provider can work."""
        return [] if self.api_key else ["no API key: set ECHO_API_KEY or api_key in [providers.echo]"]


def _headers(settings: EchoSettings) -> dict[str, str]:
    return {"authorization": f"Bearer {settings.api_key.get_secret_value()}"} if settings.api_key else {}


def _client(settings: EchoSettings) -> httpx.Client:
    # llmplex.http's clients hold every request to the call's deadline, the whole response included
    return sync_client(base_url=settings.base_url, headers=_headers(settings))


def _async_client(settings: EchoSettings) -> httpx.AsyncClient:
    # one per event loop; without create_async_client the async hooks would get the sync client
    return async_client(base_url=settings.base_url, headers=_headers(settings))


def _timeout(timeout: float | None) -> Any:
    """Core's seconds left; for None (no deadline) the client's default, as httpx reads None as "never time out"."""
    return httpx.USE_CLIENT_DEFAULT if timeout is None else timeout


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Serve the ``echo:`` prefix."""
    register(
        ProviderInfo(
            name="echo",
            settings_model=EchoSettings,
            capabilities=Capabilities(streaming=True),
            default_model="echo-1",
            create_client=_client,
            create_async_client=_async_client,
            description="Example third-party plugin: a JSON echo API.",
        )
    )


@hookimpl
def llmplex_format(request: Request) -> dict[str, Any]:
    """Messages and the options that were set, and the stream flag; tools cannot be expressed."""
    if request.tools or any(m.role == "tool" or m.tool_calls for m in request.messages):
        raise LLMConfigurationError("the echo provider has no tools: remove tools= and tool messages")
    messages = [{"role": m.role, "content": m.content or ""} for m in request.messages]
    payload: dict[str, Any] = {"model": request.model, "messages": messages, "options": request.config.set_options()}
    if request.stream:
        payload["stream"] = True
    return {**payload, **request.provider_options}


@hookimpl
def llmplex_call(payload: dict[str, Any], client: httpx.Client, timeout: float | None) -> Any:
    """POST the payload; an error status raises ``httpx.HTTPStatusError``."""
    answer = client.post("/v1/echo", json=payload, timeout=_timeout(timeout))
    answer.raise_for_status()
    return answer.json()


@hookimpl
async def llmplex_acall(payload: dict[str, Any], client: httpx.AsyncClient, timeout: float | None) -> Any:
    """Async twin of ``llmplex_call``, on the event loop's own client."""
    answer = await client.post("/v1/echo", json=payload, timeout=_timeout(timeout))
    answer.raise_for_status()
    return answer.json()


@hookimpl
def llmplex_stream(payload: dict[str, Any], client: httpx.Client, timeout: float | None) -> Iterator[Any]:
    """Open the stream here (an error status raises now), and return its events; they close the response."""
    answer = client.send(client.build_request("POST", "/v1/echo", json=payload, timeout=_timeout(timeout)), stream=True)
    if answer.is_error:
        answer.read()  # the error body, for the classifier
        answer.raise_for_status()

    def events() -> Iterator[ServerSentEvent]:
        try:
            yield from iter_sse(answer.iter_bytes())
        finally:  # at the end, on an error, or when core closes this iterator early
            answer.close()

    return events()


@hookimpl
async def llmplex_astream(
    payload: dict[str, Any], client: httpx.AsyncClient, timeout: float | None
) -> AsyncIterator[Any]:
    """Async twin of ``llmplex_stream``: a coroutine, so core gets an awaitable of an async iterator."""
    request = client.build_request("POST", "/v1/echo", json=payload, timeout=_timeout(timeout))
    answer = await client.send(request, stream=True)
    if answer.is_error:
        await answer.aread()
        answer.raise_for_status()

    async def events() -> AsyncIterator[ServerSentEvent]:
        try:
            async for event in aiter_sse(answer.aiter_bytes()):
                yield event
        finally:
            await answer.aclose()

    return events()


def _finish(raw: dict[str, Any]) -> Any:
    return "length" if raw.get("finish_reason") == "length" else "stop"


@hookimpl
def llmplex_parse(raw: dict[str, Any]) -> Response:
    """The API's answer as a core Response; an answer cut by ``max_tokens`` ends with finish reason ``length``."""
    return Response(
        text=raw["text"],
        model=raw["model"],
        response_id=raw["id"],
        usage=Usage(**raw["usage"]),
        finish_reason=_finish(raw),
        raw=raw,
    )


@hookimpl
def llmplex_parse_event(raw_event: ServerSentEvent) -> list[StreamEvent]:
    """One event: a piece of text, or the end (usage and finish reason); id and model on each."""
    data = raw_event.json()
    ids = {"response_id": data["id"], "model": data["model"]}
    if raw_event.event != "done":
        return [StreamEvent(type="text", text=data["delta"], **ids)]
    return [
        StreamEvent(type="usage", usage=Usage(**data["usage"]), **ids),
        StreamEvent(type="finish", finish_reason=_finish(data), **ids),
    ]


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """Error statuses as the core taxonomy: ``llmplex.http``'s mapping (a 429 whose error type names a quota is
    ``LLMQuotaExhaustedError``; waits are read from the headers); core's fallback maps the rest (timeouts...)."""
    return classify_http_error(error, key_hint="check ECHO_API_KEY")
