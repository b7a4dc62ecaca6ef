"""The cases bench/transport.py runs: one short call (sync, async) or one streamed call per case.

Each factory takes the stub server's root URL and returns a ready-to-call function (clients built, imports done,
nothing timed yet). Yardsticks post the same JSON as the SDKs with raw ``httpx``, ``httpx2`` and ``aiohttp`` and
decode the JSON answer; a case whose library is missing is left out."""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transport_pairs import AIOHTTP, AIOHTTP_SDK_POOL

MODEL = "stub-model"
PROMPT = "Say hello."
MESSAGES = [{"role": "user", "content": PROMPT}]
CHAT_BODY = {"model": MODEL, "messages": MESSAGES}
MESSAGES_BODY = {"max_tokens": 4096, "messages": MESSAGES, "model": MODEL}
RESPONSES_BODY = {"model": MODEL, "input": PROMPT}
HEADERS = {"authorization": "Bearer bench", "content-type": "application/json"}

Sync = Callable[[], object]
Async = Callable[[], Awaitable[object]]
Stream = Callable[[], Iterator[object]]
"""A streamed call: yields once per text chunk, as the caller would see it."""
AsyncStream = Callable[[], AsyncIterator[object]]
"""Async twin of ``Stream``."""


@dataclass(frozen=True)
class Cases:
    """Every case, built against one server, and what to close at the end."""

    sync: dict[str, Sync]
    asynchronous: dict[str, Callable[[], Async]]
    """Factories called inside the running loop (clients bound to it)."""
    streams: dict[str, Stream]
    astreams: dict[str, Callable[[], AsyncStream]]
    """Factories called inside the running loop, like ``asynchronous``."""
    closers: list[Callable[[], object]]
    aclosers: list[Callable[[], Awaitable[object]]]
    """Closed at the end of the event loop the async cases ran in."""


def has(module: str) -> bool:
    """Whether ``module`` can be imported."""
    return importlib.util.find_spec(module) is not None


BEDROCK_INSTANCE = (
    '\n[providers.localbr]\nplugin = "bedrock"\nendpoint_url = "{root}"\nregion = "us-east-1"\n'
    'aws_access_key_id = "AKIABENCH00000000000"\naws_secret_access_key = "bench"\n'
)
"""The ``localbr`` instance: Bedrock's ConverseStream on the stub (SigV4-signed with dummy keys)."""
AZURE_INSTANCE = '\n[providers.localaz]\nplugin = "azure"\nendpoint = "{root}"\napi_key = "bench"\n'
"""The ``localaz`` instance: Azure OpenAI's Chat Completions on a deployment's URL, which the stub answers."""
AZURE_API_VERSION = "2024-10-21"
"""llmplex-azure's default ``api-version``, which the yardstick sends too."""
GEMINI_INSTANCE = '\n[providers.localg]\nplugin = "gemini"\nbase_url = "{root}"\napi_key = "bench"\n'
"""The ``localg`` instance: Gemini's API on the stub."""
BEDROCK_BODY = {"messages": [{"role": "user", "content": [{"text": PROMPT}]}]}


def configure_llmplex(root: str, folder: Path) -> None:
    """A config whose ``local``/``localr``/``localant``/``localp`` instances are the stub (chat, responses,
    anthropic, and the ``mistral`` openai-compatible preset), and ``localbr``, ``localg``, ``localaz`` (Bedrock,
    Gemini, Azure) when their plugins are installed. Only the test distribution's observers are left out:
    llmplex-otel stays on, as ``llmplex[all]`` installs it (idle while no OpenTelemetry provider is set)."""
    config = folder / "llmplex.toml"
    config.write_text(
        'disabled = ["recorder", "exitobserver"]\n\n'
        f'[providers.local]\nplugin = "openai"\nbase_url = "{root}/v1"\napi = "chat"\napi_key = "bench"\n\n'
        f'[providers.localr]\nplugin = "openai"\nbase_url = "{root}/v1"\napi = "responses"\napi_key = "bench"\n\n'
        f'[providers.localant]\nplugin = "anthropic"\nbase_url = "{root}"\napi_key = "bench"\n\n'
        f'[providers.localp]\nplugin = "mistral"\nbase_url = "{root}/v1"\napi_key = "bench"\n'
        + (BEDROCK_INSTANCE.format(root=root) if has("llmplex_bedrock") else "")
        + (GEMINI_INSTANCE.format(root=root) if has("llmplex_gemini") else "")
        + (AZURE_INSTANCE.format(root=root) if has("llmplex_azure") else "")
    )
    os.environ["LLMPLEX_CONFIG"] = str(config)


def build(root: str, *, litellm: bool) -> Cases:
    """Every available case against the server at ``root`` (``http://127.0.0.1:PORT``)."""
    cases = Cases({}, {}, {}, {}, [], [])
    _yardsticks(root, cases)
    _sdks(root, cases)
    if litellm and has("litellm"):
        _litellm(root, cases)
    _llmplex(cases)
    if has("llmplex_bedrock"):
        _bedrock(root, cases)
    if has("llmplex_gemini"):
        _gemini(root, cases)
    if has("llmplex_azure"):
        _azure(root, cases)
    return cases


def _yardsticks(root: str, cases: Cases) -> None:
    import httpx
    import httpx2

    chat = f"{root}/v1/chat/completions"
    for name, http in (("httpx", httpx), ("httpx2", httpx2)):
        client = http.Client(headers=HEADERS)
        cases.closers.append(client.close)
        cases.sync[f"raw {name}"] = lambda client=client: client.post(chat, json=CHAT_BODY).json()

        def factory(http: Any = http) -> Async:
            client = http.AsyncClient(headers=HEADERS)

            async def call() -> object:
                return (await client.post(chat, json=CHAT_BODY)).json()

            return call

        cases.asynchronous[f"raw {name}"] = factory
    raw = httpx.Client(headers=HEADERS)
    cases.closers.append(raw.close)
    for label, body in (("messages", MESSAGES_BODY), ("responses", RESPONSES_BODY)):
        url = f"{root}/v1/{label}"
        cases.sync[f"raw httpx ({label})"] = lambda url=url, body=body, raw=raw: raw.post(url, json=body).json()
    if has("aiohttp"):
        cases.asynchronous[AIOHTTP] = lambda: _aiohttp(chat, cases, 100)
        cases.asynchronous[AIOHTTP_SDK_POOL] = lambda: _aiohttp(chat, cases, 1000)
    client = httpx.Client(headers=HEADERS)
    cases.closers.append(client.close)
    cases.streams["raw httpx SSE (chat)"] = lambda: _raw_sse(client, chat, {**CHAT_BODY, "stream": True})
    messages = f"{root}/v1/messages"
    cases.streams["raw httpx SSE (messages)"] = lambda: _raw_sse(client, messages, {**MESSAGES_BODY, "stream": True})
    responses = f"{root}/v1/responses"
    cases.streams["raw httpx SSE (responses)"] = lambda: _raw_sse(client, responses, {**RESPONSES_BODY, "stream": True})
    for label, url, body in (
        ("chat", chat, CHAT_BODY),
        ("messages", messages, MESSAGES_BODY),
        ("responses", responses, RESPONSES_BODY),
    ):

        def araw(url: str = url, body: dict[str, Any] = body) -> AsyncStream:
            client = httpx.AsyncClient(headers=HEADERS)
            cases.aclosers.append(client.aclose)
            return lambda: _araw_sse(client, url, {**body, "stream": True})

        cases.astreams[f"raw httpx SSE (async {label})"] = araw


def _aiohttp(url: str, cases: Cases, pool: int) -> Async:
    import aiohttp

    session = aiohttp.ClientSession(headers=HEADERS, connector=aiohttp.TCPConnector(limit=pool))
    cases.aclosers.append(session.close)

    async def call() -> object:
        async with session.post(url, json=CHAT_BODY) as response:
            return await response.json()

    return call


def _raw_sse(client: Any, url: str, body: dict[str, Any]) -> Iterator[object]:
    """SSE read by hand: every ``data:`` line decoded, each text delta yielded."""
    with client.stream("POST", url, json=body) as response:
        for line in response.iter_lines():
            if (event := _text_event(line)) is not None:
                yield event


async def _araw_sse(client: Any, url: str, body: dict[str, Any]) -> AsyncIterator[object]:
    """Async twin of ``_raw_sse``."""
    async with client.stream("POST", url, json=body) as response:
        async for line in response.aiter_lines():
            if (event := _text_event(line)) is not None:
                yield event


def _text_event(line: str) -> Any:
    """The decoded event of an SSE ``data:`` line that carries text (a chat delta, a Messages
    ``content_block_delta`` or a Responses ``response.output_text.delta``), else ``None``."""
    if not line.startswith("data:") or line == "data: [DONE]":
        return None
    event = json.loads(line[5:])
    if "choices" in event:
        return event if event["choices"] and event["choices"][0]["delta"].get("content") else None
    return event if event.get("type") in _TEXT_EVENTS else None


_TEXT_EVENTS = frozenset({"content_block_delta", "response.output_text.delta"})


def _sdks(root: str, cases: Cases) -> None:
    import anthropic
    import openai

    sync_openai = openai.OpenAI(base_url=f"{root}/v1", api_key="bench", max_retries=0)
    sync_anthropic = anthropic.Anthropic(base_url=root, api_key="bench", max_retries=0)
    cases.closers.extend([sync_openai.close, sync_anthropic.close])
    cases.sync["openai SDK chat"] = lambda: sync_openai.chat.completions.create(model=MODEL, messages=MESSAGES)  # type: ignore[arg-type]
    cases.sync["openai SDK responses"] = lambda: sync_openai.responses.create(model=MODEL, input=PROMPT)
    cases.sync["anthropic SDK"] = lambda: sync_anthropic.messages.create(**MESSAGES_BODY)  # type: ignore[arg-type]

    def async_openai() -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=f"{root}/v1", api_key="bench", max_retries=0)

    def chat_factory() -> Async:
        client = async_openai()
        cases.aclosers.append(client.close)  # closed in its own loop, not by the SDK's __del__ in a later one
        return lambda: client.chat.completions.create(model=MODEL, messages=MESSAGES)  # type: ignore[arg-type]

    def responses_factory() -> Async:
        client = async_openai()
        cases.aclosers.append(client.close)
        return lambda: client.responses.create(model=MODEL, input=PROMPT)

    def messages_factory() -> Async:
        client = anthropic.AsyncAnthropic(base_url=root, api_key="bench", max_retries=0)
        cases.aclosers.append(client.close)
        return lambda: client.messages.create(**MESSAGES_BODY)  # type: ignore[arg-type]

    cases.asynchronous["openai SDK chat"] = chat_factory
    cases.asynchronous["openai SDK responses"] = responses_factory
    cases.asynchronous["anthropic SDK"] = messages_factory

    def openai_stream() -> Iterator[object]:
        with sync_openai.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True) as stream:  # type: ignore[arg-type]
            yield from (chunk for chunk in stream if chunk.choices and chunk.choices[0].delta.content)

    def anthropic_stream() -> Iterator[object]:
        with sync_anthropic.messages.create(**MESSAGES_BODY, stream=True) as stream:  # type: ignore[arg-type]
            yield from (event for event in stream if event.type == "content_block_delta")

    def responses_stream() -> Iterator[object]:
        with sync_openai.responses.create(model=MODEL, input=PROMPT, stream=True) as stream:
            yield from (event for event in stream if event.type == "response.output_text.delta")

    cases.streams["openai SDK chat"] = openai_stream
    cases.streams["openai SDK responses"] = responses_stream
    cases.streams["anthropic SDK"] = anthropic_stream

    def openai_astream() -> AsyncStream:
        client = async_openai()
        cases.aclosers.append(client.close)

        async def chunks() -> AsyncIterator[object]:
            stream = await client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)  # type: ignore[arg-type]
            async with stream:
                async for chunk in stream:
                    if chunk.choices and chunk.choices[0].delta.content:
                        yield chunk

        return chunks

    def anthropic_astream() -> AsyncStream:
        client = anthropic.AsyncAnthropic(base_url=root, api_key="bench", max_retries=0)
        cases.aclosers.append(client.close)

        async def events() -> AsyncIterator[object]:
            stream = await client.messages.create(**MESSAGES_BODY, stream=True)  # type: ignore[arg-type]
            async with stream:
                async for event in stream:
                    if event.type == "content_block_delta":
                        yield event

        return events

    def responses_astream() -> AsyncStream:
        client = async_openai()
        cases.aclosers.append(client.close)

        async def events() -> AsyncIterator[object]:
            stream = await client.responses.create(model=MODEL, input=PROMPT, stream=True)
            async with stream:
                async for event in stream:
                    if event.type == "response.output_text.delta":
                        yield event

        return events

    cases.astreams["openai SDK chat"] = openai_astream
    cases.astreams["openai SDK responses"] = responses_astream
    cases.astreams["anthropic SDK"] = anthropic_astream


def _litellm(root: str, cases: Cases) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    options = {"model": f"openai/{MODEL}", "messages": MESSAGES, "api_base": f"{root}/v1", "api_key": "bench"}
    cases.sync["litellm"] = lambda: litellm.completion(**options)
    cases.asynchronous["litellm"] = lambda: lambda: litellm.acompletion(**options)


_LLMPLEX_ROWS = (("chat", "local"), ("responses", "localr"), ("anthropic", "localant"), ("openai-compatible", "localp"))
"""Each llmplex row: its label and the configured instance it calls."""


def _llmplex(cases: Cases) -> None:
    import llmplex

    for label, prefix in _LLMPLEX_ROWS:
        model = f"{prefix}:{MODEL}"
        cases.sync[f"llmplex {label}"] = lambda model=model: llmplex.complete(model, PROMPT)
        cases.asynchronous[f"llmplex {label}"] = lambda model=model: lambda: llmplex.acomplete(model, PROMPT)
    for label, prefix in _LLMPLEX_ROWS:
        model = f"{prefix}:{MODEL}"
        cases.streams[f"llmplex {label}"] = lambda model=model: (
            event for event in llmplex.stream(model, PROMPT) if event.type == "text"
        )
        cases.astreams[f"llmplex {label}"] = lambda model=model: lambda: _atext(llmplex.astream(model, PROMPT))


def _bedrock(root: str, cases: Cases) -> None:
    """Bedrock's ConverseStream: raw httpx reading the event stream with botocore's frame decoder and ``json``
    (the yardstick; unsigned), boto3's ``converse_stream`` (urllib3, its own parser), and llmplex's stream."""
    import boto3
    import httpx

    import llmplex

    url = f"{root}/model/{MODEL}/converse-stream"
    client = httpx.Client(headers=HEADERS)
    cases.closers.append(client.close)
    cases.streams["raw httpx SSE (bedrock)"] = lambda: _raw_eventstream(client.stream("POST", url, json=BEDROCK_BODY))

    def araw() -> AsyncStream:
        aclient = httpx.AsyncClient(headers=HEADERS)
        cases.aclosers.append(aclient.aclose)
        return lambda: _araw_eventstream(aclient, url)

    cases.astreams["raw httpx SSE (async bedrock)"] = araw
    keys = {"aws_access_key_id": "AKIABENCH00000000000", "aws_secret_access_key": "bench"}
    sdk = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=root, **keys)
    cases.closers.append(sdk.close)

    def boto3_stream() -> Iterator[object]:
        stream = sdk.converse_stream(modelId=MODEL, **BEDROCK_BODY)["stream"]
        yield from (event for event in stream if "contentBlockDelta" in event)

    cases.streams["boto3 SDK bedrock"] = boto3_stream
    model = f"localbr:{MODEL}"
    cases.streams["llmplex bedrock"] = lambda: (
        event for event in llmplex.stream(model, PROMPT) if event.type == "text"
    )
    cases.astreams["llmplex bedrock"] = lambda: lambda: _atext(llmplex.astream(model, PROMPT))


GEMINI_BODY = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}
GEMINI_HEADERS = {"x-goog-api-key": "bench", "content-type": "application/json"}


def _gemini_text(line: str) -> Any:
    """The decoded chunk of a ``data:`` line that carries text, else ``None``."""
    if not line.startswith("data:"):
        return None
    chunk = json.loads(line[5:])
    candidates = chunk.get("candidates") or ()
    parts = (candidates[0].get("content") or {}).get("parts") or () if candidates else ()
    return chunk if any(part.get("text") for part in parts) else None


def _raw_gemini(client: Any, url: str) -> Iterator[object]:
    with client.stream("POST", url, json=GEMINI_BODY) as response:
        for line in response.iter_lines():
            if (chunk := _gemini_text(line)) is not None:
                yield chunk


async def _araw_gemini(client: Any, url: str) -> AsyncIterator[object]:
    async with client.stream("POST", url, json=GEMINI_BODY) as response:
        async for line in response.aiter_lines():
            if (chunk := _gemini_text(line)) is not None:
                yield chunk


def _gemini(root: str, cases: Cases) -> None:
    """Gemini's ``streamGenerateContent?alt=sse``: raw httpx reading the event stream by hand (the yardstick),
    the google-genai SDK's ``generate_content_stream`` and llmplex's stream (llmplex-gemini's lean stream)."""
    import httpx
    from google import genai
    from google.genai import types

    import llmplex

    url = f"{root}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
    client = httpx.Client(headers=GEMINI_HEADERS)
    cases.closers.append(client.close)
    whole = f"{root}/v1beta/models/{MODEL}:generateContent"
    cases.sync["raw httpx (gemini)"] = lambda: client.post(whole, json=GEMINI_BODY).json()
    cases.streams["raw httpx SSE (gemini)"] = lambda: _raw_gemini(client, url)

    def araw() -> AsyncStream:
        aclient = httpx.AsyncClient(headers=GEMINI_HEADERS)
        cases.aclosers.append(aclient.aclose)
        return lambda: _araw_gemini(aclient, url)

    cases.astreams["raw httpx SSE (async gemini)"] = araw
    options = types.HttpOptions(base_url=root, retry_options=types.HttpRetryOptions(attempts=1))
    sdk = genai.Client(api_key="bench", http_options=options)
    cases.closers.append(sdk.close)
    cases.sync["google-genai SDK gemini"] = lambda: sdk.models.generate_content(model=MODEL, contents=PROMPT)
    cases.streams["google-genai SDK gemini"] = lambda: (
        chunk for chunk in sdk.models.generate_content_stream(model=MODEL, contents=PROMPT) if chunk.text
    )

    def asdk() -> AsyncStream:
        aio = genai.Client(api_key="bench", http_options=options).aio
        cases.aclosers.append(aio.aclose)

        async def chunks() -> AsyncIterator[object]:
            async for chunk in await aio.models.generate_content_stream(model=MODEL, contents=PROMPT):
                if chunk.text:
                    yield chunk

        return chunks

    cases.astreams["google-genai SDK gemini"] = asdk
    model = f"localg:{MODEL}"
    cases.sync["llmplex gemini"] = lambda: llmplex.complete(model, PROMPT)
    cases.asynchronous["llmplex gemini"] = lambda: lambda: llmplex.acomplete(model, PROMPT)
    cases.streams["llmplex gemini"] = lambda: (event for event in llmplex.stream(model, PROMPT) if event.type == "text")
    cases.astreams["llmplex gemini"] = lambda: lambda: _atext(llmplex.astream(model, PROMPT))


def _azure(root: str, cases: Cases) -> None:
    """Azure OpenAI's Chat Completions on a deployment, sync: raw httpx posting the chat JSON to the deployment's
    URL with the ``api-key`` header (the yardstick), the openai SDK's ``AzureOpenAI``, and llmplex-azure."""
    import httpx
    from openai import AzureOpenAI

    import llmplex

    url = f"{root}/openai/deployments/{MODEL}/chat/completions?api-version={AZURE_API_VERSION}"
    client = httpx.Client(headers={"api-key": "bench", "content-type": "application/json"})
    cases.closers.append(client.close)
    cases.sync["raw httpx (azure)"] = lambda: client.post(url, json=CHAT_BODY).json()
    sdk = AzureOpenAI(azure_endpoint=root, api_key="bench", api_version=AZURE_API_VERSION, max_retries=0)
    cases.closers.append(sdk.close)
    cases.sync["openai SDK azure"] = lambda: sdk.chat.completions.create(model=MODEL, messages=MESSAGES)  # type: ignore[arg-type]
    model = f"localaz:{MODEL}"
    cases.sync["llmplex azure"] = lambda: llmplex.complete(model, PROMPT)
    cases.asynchronous["llmplex azure"] = lambda: lambda: llmplex.acomplete(model, PROMPT)


def _frames(buffer: Any, chunk: bytes) -> Iterator[object]:
    buffer.add_data(chunk)
    for message in buffer:
        if message.headers.get(":event-type") == "contentBlockDelta":
            yield json.loads(message.payload)


def _raw_eventstream(opened: Any) -> Iterator[object]:
    """An event stream read by hand: botocore's frame decoder, each text delta's JSON decoded."""
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    with opened as response:
        for chunk in response.iter_bytes():
            yield from _frames(buffer, chunk)


async def _araw_eventstream(client: Any, url: str) -> AsyncIterator[object]:
    """Async twin of ``_raw_eventstream``."""
    from botocore.eventstream import EventStreamBuffer

    buffer = EventStreamBuffer()
    async with client.stream("POST", url, json=BEDROCK_BODY) as response:
        async for chunk in response.aiter_bytes():
            for event in _frames(buffer, chunk):
                yield event


async def _atext(events: AsyncIterator[Any]) -> AsyncIterator[object]:
    async for event in events:
        if event.type == "text":
            yield event


def event_observers() -> str:
    """The ``llmplex_event`` observers the default client loaded: an environment with a test plugin that
    observes events (the py env's ``llmplex-testplugins``) measures llmplex slower than users see it."""
    import llmplex

    client = llmplex.default_client()
    client.host.load_observers(client.config.disabled)
    host = client.host
    names = sorted({impl.plugin_name for impl in host.pm.hook.llmplex_event.get_hookimpls()})
    state = "active" if host.has_event_listeners else "all idle: no event is built"
    return f"{', '.join(names)} ({state})" if names else "none"
