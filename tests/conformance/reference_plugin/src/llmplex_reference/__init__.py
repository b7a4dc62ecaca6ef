"""llmplex-reference: an OpenAI-compatible Chat Completions provider over plain httpx, written from the docs.

A third party's plugin as the tutorial teaches it: settings, sync and async httpx
clients (``llmplex.http``), the request and response translation, streaming
(``llmplex.http.iter_sse``), error classification (``llmplex.http``'s status
mapping), and reasoning state: the ``reasoning_details`` an assistant message
answers with (as OpenRouter documents them) are kept as opaque ``ReasoningPart``s
and sent back unchanged on the next turn. The conformance kit runs on it, and on single-bug mutants of it
(tests/conformance/reference_plugin/mutants.py), to show which bugs it catches.
"""

from __future__ import annotations

import functools
import json
import ssl
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
from pydantic import SecretStr

from llmplex.errors import LLMError
from llmplex.hookspecs import hookimpl
from llmplex.http import ServerSentEvent, aiter_sse, async_client, classify_http_error, iter_sse, sync_client
from llmplex.provider import Capabilities, ProviderInfo, ProviderSettings
from llmplex.types import Message, ReasoningPart, Request, Response, StreamEvent, StreamState, ToolCall, Usage

REASONING = "reference"
"""``ReasoningPart.format`` of this provider's ``reasoning_details``."""
FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "content_filter": "content_filter"}


class ReferenceSettings(ProviderSettings):
    """``api_key`` (``REFERENCE_API_KEY``) and the server's ``base_url`` (``REFERENCE_BASE_URL``)."""

    env_vars = {"api_key": ("REFERENCE_API_KEY",), "base_url": ("REFERENCE_BASE_URL",)}

    api_key: SecretStr | None = None
    base_url: str = "https://api.reference.example/v1"


def _headers(settings: ReferenceSettings) -> dict[str, str]:
    return {"authorization": f"Bearer {settings.api_key.get_secret_value()}"} if settings.api_key else {}


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client (loading the CA bundle takes a while)."""
    return ssl.create_default_context()


def _client(settings: ReferenceSettings) -> httpx.Client:
    return sync_client(base_url=settings.base_url, headers=_headers(settings), verify=_tls())


def _async_client(settings: ReferenceSettings) -> httpx.AsyncClient:
    return async_client(base_url=settings.base_url, headers=_headers(settings), verify=_tls())


def _timeout(timeout: float | None) -> Any:
    """Core's seconds left, or the client's default (httpx reads None as "no timeout at all")."""
    return httpx.USE_CLIENT_DEFAULT if timeout is None else timeout


@hookimpl
def llmplex_register_providers(register: Callable[[ProviderInfo], None]) -> None:
    """Serve the ``reference:`` prefix."""
    register(
        ProviderInfo(
            name="reference",
            settings_model=ReferenceSettings,
            capabilities=Capabilities(
                streaming=True, tools=True, native_structured_output=True, reasoning_formats=frozenset({REASONING})
            ),
            default_model="reference-1",
            create_client=_client,
            create_async_client=_async_client,
            description="Reference third-party plugin: an OpenAI-compatible server over httpx.",
        )
    )


def _message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content or ""}
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    details = [part.data for part in message.reasoning if part.format == REASONING]
    if details:
        out["reasoning_details"] = details
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    return out


def _tool_choice(choice: str) -> Any:
    return choice if choice in ("auto", "none", "required") else {"type": "function", "function": {"name": choice}}


@hookimpl
def llmplex_format(request: Request) -> dict[str, Any]:
    """A ``/chat/completions`` body with only the options that were set."""
    payload: dict[str, Any] = {"model": request.model, "messages": [_message(m) for m in request.messages]}
    payload.update(request.config.set_options())
    if request.tools:
        payload["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in request.tools
        ]
    if request.tool_choice is not None:
        payload["tool_choice"] = _tool_choice(request.tool_choice)
    if request.output is not None:
        schema = {"name": request.output.name, "schema": request.output.json_schema, "strict": request.output.strict}
        payload["response_format"] = {"type": "json_schema", "json_schema": schema}
    if request.stream:
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
    return {**payload, **request.provider_options}


@hookimpl
def llmplex_call(payload: dict[str, Any], client: httpx.Client, timeout: float | None) -> Any:
    """POST the payload; an error status raises ``httpx.HTTPStatusError``."""
    answer = client.post("/chat/completions", json=payload, timeout=_timeout(timeout))
    answer.raise_for_status()
    return answer.json()


@hookimpl
async def llmplex_acall(payload: dict[str, Any], client: httpx.AsyncClient, timeout: float | None) -> Any:
    """Async twin of ``llmplex_call``."""
    answer = await client.post("/chat/completions", json=payload, timeout=_timeout(timeout))
    answer.raise_for_status()
    return answer.json()


def _chunk(event: ServerSentEvent) -> Any:
    """The JSON chunk an event carries (``None`` for the final ``[DONE]``)."""
    return None if event.data == "[DONE]" else json.loads(event.data)


@hookimpl
def llmplex_stream(payload: dict[str, Any], client: httpx.Client, timeout: float | None) -> Iterator[Any]:
    """Open the stream (errors raise here) and yield each chunk; the response is closed at the end."""
    answer = client.send(
        client.build_request("POST", "/chat/completions", json=payload, timeout=_timeout(timeout)), stream=True
    )
    if answer.is_error:
        answer.read()
        answer.raise_for_status()

    def chunks() -> Iterator[Any]:
        try:
            for event in iter_sse(answer.iter_bytes()):
                if (data := _chunk(event)) is not None:
                    yield data
        finally:
            answer.close()

    return chunks()


@hookimpl
async def llmplex_astream(
    payload: dict[str, Any], client: httpx.AsyncClient, timeout: float | None
) -> AsyncIterator[Any]:
    """Async twin of ``llmplex_stream``: an awaitable of an async iterator."""
    request = client.build_request("POST", "/chat/completions", json=payload, timeout=_timeout(timeout))
    answer = await client.send(request, stream=True)
    if answer.is_error:
        await answer.aread()
        answer.raise_for_status()

    async def chunks() -> AsyncIterator[Any]:
        try:
            async for event in aiter_sse(answer.aiter_bytes()):
                if (data := _chunk(event)) is not None:
                    yield data
        finally:
            await answer.aclose()

    return chunks()


def _usage(raw: dict[str, Any] | None) -> Usage:
    raw = raw or {}
    cached = (raw.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    reasoning = (raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
    return Usage(
        input_tokens=raw.get("prompt_tokens") or 0,
        output_tokens=raw.get("completion_tokens") or 0,
        cached_tokens=cached,
        reasoning_tokens=reasoning,
    )


@hookimpl
def llmplex_parse(raw: dict[str, Any]) -> Response:
    """The first choice as a core Response; a refusal ends with finish reason ``refusal``."""
    choice = raw["choices"][0]
    message = choice["message"]
    calls = tuple(
        ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"] or "{}")
        for c in message.get("tool_calls") or ()
    )
    refusal = message.get("refusal")
    reasoning = tuple(
        ReasoningPart(format=REASONING, text=detail.get("text") or "", data=detail)
        for detail in message.get("reasoning_details") or ()
    )
    return Response(
        text=message.get("content") or "",
        tool_calls=calls,
        finish_reason="refusal" if refusal else FINISH.get(choice.get("finish_reason"), "other"),
        refusal=refusal,
        usage=_usage(raw.get("usage")),
        model=raw.get("model", ""),
        response_id=raw.get("id"),
        reasoning=reasoning,
        raw=raw,
    )


@hookimpl
def llmplex_parse_event(raw_event: dict[str, Any], state: StreamState) -> list[StreamEvent]:
    """One chunk: text, tool-call pieces (by index), the finish reason, usage; ids and model on every event."""
    ids = {"response_id": raw_event.get("id"), "model": raw_event.get("model")}
    events: list[StreamEvent] = []
    for choice in raw_event.get("choices", [])[:1]:
        delta = choice.get("delta") or {}
        if delta.get("content"):
            events.append(StreamEvent(type="text", text=delta["content"], **ids))
        if delta.get("refusal"):
            state.data["refused"] = True
        state.data.setdefault("reasoning", []).extend(delta.get("reasoning_details") or ())
        for call in delta.get("tool_calls") or ():
            function = call.get("function") or {}
            events.append(
                StreamEvent(
                    type="tool_call",
                    tool_call_index=call["index"],
                    tool_call_id=call.get("id"),
                    tool_name=function.get("name"),
                    arguments_delta=function.get("arguments") or "",
                    **ids,
                )
            )
        if choice.get("finish_reason"):
            for detail in state.data.pop("reasoning", ()):
                part = ReasoningPart(format=REASONING, text=detail.get("text") or "", data=detail)
                events.append(StreamEvent(type="reasoning", reasoning=part, **ids))
            finish = "refusal" if state.data.get("refused") else FINISH.get(choice["finish_reason"], "other")
            events.append(StreamEvent(type="finish", finish_reason=finish, **ids))
    if raw_event.get("usage"):
        events.append(StreamEvent(type="usage", usage=_usage(raw_event["usage"]), **ids))
    return events


@hookimpl
def llmplex_classify_error(error: BaseException) -> LLMError | None:
    """Error statuses as the core taxonomy (``insufficient_quota`` 429s are quota, waits read from the headers);
    core's fallback maps httpx timeouts and connection failures."""
    return classify_http_error(error, key_hint="check REFERENCE_API_KEY")
