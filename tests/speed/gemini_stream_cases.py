"""What the lean Gemini stream tests share: the instance, the documented streams, the module's server and client,
``read_events``, which reads one stream with ``stream`` or ``astream``, and ``_both``, which reads one stream
through the SDK and then lean and says how each ended."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from llmplex_gemini import hooks as gemini_hooks
from llmplex_gemini import lean as gemini_lean

import llmplex
from llmplex import LLMError
from llmplex.types import Tool
from tests.plugins.gemini.wire import MODEL, function_call_part, response, text_part, usage
from tests.support.lean_streams import count_reads
from tests.support.stream_server import Reply, StreamServer

KEY = "AIzaSyLEANSTREAM_0123456789abcdefghijk"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
SIGNATURE = base64.b64encode(b"signed-thought").decode()
WEATHER = Tool(
    name="get_weather",
    description="Weather of a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def _config(url: str, **settings: Any) -> dict[str, Any]:
    return {"providers": {"g": {"plugin": "gemini", "base_url": url, "api_key": KEY, **settings}}}


def _chunk(parts: list[dict[str, Any]], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return response(parts, finish_reason=finish, **extra)


TEXT = [
    _chunk([text_part("Hel")], usage_metadata=usage(5, 1)),
    _chunk([text_part("lo!")], "STOP", usage_metadata=usage(5, 2)),
]
STREAMS: dict[str, list[dict[str, Any]]] = {
    "text": TEXT,
    "tool calls": [
        _chunk([text_part("Checking.")]),
        _chunk([function_call_part("get_weather", {"city": "Paris"}, "call_1")]),
        _chunk([function_call_part("get_weather", {"city": "Oslo"})], "STOP", usage_metadata=usage(9, 4)),
    ],
    "thoughts and a signature": [
        _chunk([text_part("Let me think.", thought=True)], usage_metadata=usage(5, 0, thoughts=3)),
        _chunk([{"text": "42", "thoughtSignature": SIGNATURE}], "STOP", usage_metadata=usage(5, 1, thoughts=3)),
    ],
    "safety ratings and audio usage": [
        _chunk(
            [text_part("Hi")],
            safety_ratings=[{"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}],
        ),
        _chunk(
            [text_part("!")],
            "MAX_TOKENS",
            usage_metadata={
                **usage(7, 2, cached=4),
                "promptTokensDetails": [{"modality": "AUDIO", "tokenCount": 7}],
                "cacheTokensDetails": [{"modality": "AUDIO", "tokenCount": 4}],
            },
        ),
    ],
}

read_lean: list[str] = []


@pytest.fixture
def via(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], None]:
    """Choose the SDK (``True``) or the lean path; each lean read is counted in ``read_lean``."""
    count_reads(monkeypatch, gemini_lean, read_lean)
    prepare = gemini_lean.prepare

    def choose(sdk: bool) -> None:
        monkeypatch.setattr(gemini_hooks, "prepare", (lambda *a, **k: None) if sdk else prepare)

    return choose


def _read(mode: str) -> list[str]:
    return ["iter_sse" if mode == "stream" else "aiter_sse"]


def read_events(client: llmplex.Client, mode: str) -> list[Any]:
    """Every event of one stream of ``MODEL`` (prompt ``"hi"``), read with ``stream`` or with ``astream``."""
    model = f"g:{MODEL}"
    if mode == "stream":
        return list(client.stream(model, "hi"))

    async def events() -> list[Any]:
        return [event async for event in client.astream(model, "hi")]

    return asyncio.run(events())


def _final(events: list[Any]) -> tuple[Any, ...]:
    final = events[-1].response
    return (
        final.text,
        final.tool_calls,
        final.finish_reason,
        final.usage,
        final.response_id,
        final.model,
        final.reasoning,
    )


@pytest.fixture(scope="module")
def server() -> Iterator[StreamServer]:
    """One local server for the module's cases (each scripts its replies)."""
    with StreamServer() as running:
        yield running


@pytest.fixture(scope="module")
def client(server: StreamServer) -> Iterator[llmplex.Client]:
    """One client for the module's cases (its provider client is built once), retries off."""
    built = llmplex.Client(_config(server.url), throttle={"max_attempts": 1})
    yield built
    built.close()


Ending = tuple[Any, ...]


def _ending_of(events: list[Any], error: LLMError | None) -> Ending:
    """``("ok", final response, text)``, or the error's type, message, status code and requested wait, and the
    text delivered before it."""
    text = "".join(e.text or "" for e in events if e.type == "text")
    if error is None:
        return "ok", _final(events), text
    wait = (getattr(error, "status_code", None), getattr(error, "retry_after", None))
    return type(error), str(error), wait, text


def _both(
    client: llmplex.Client,
    server: Any,
    via: Callable[[bool], None],
    mode: str,
    reply: Callable[[], None],
    **kwargs: Any,
) -> list[Ending]:
    """How the stream ends through the SDK, then lean (``reply`` scripts the server before each); async: both in
    one event loop, so its provider client is built once."""
    endings: list[Ending] = []
    model = f"g:{MODEL}"
    prompt = kwargs.pop("prompt", "hi")
    if mode == "stream":
        for sdk in (True, False):
            via(sdk)
            reply()
            seen: list[Any] = []
            try:
                seen.extend(client.stream(model, prompt, **kwargs))
            except LLMError as error:
                endings.append(_ending_of(seen, error))
            else:
                endings.append(_ending_of(seen, None))
        return endings

    async def read() -> None:
        for sdk in (True, False):
            via(sdk)
            reply()
            seen: list[Any] = []
            try:
                async for event in client.astream(model, prompt, **kwargs):
                    seen.append(event)
            except LLMError as error:
                endings.append(_ending_of(seen, error))
            else:
                endings.append(_ending_of(seen, None))

    asyncio.run(read())
    return endings


def _script(server: StreamServer, *replies: Reply) -> Callable[[], None]:
    return lambda: server.script(*replies)
