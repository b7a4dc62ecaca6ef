"""Issue 34 item 3: llmplex-gemini's async calls send through aiohttp and its lean ``generateContent`` posts straight
on the aiohttp session (``llmplex.http.direct_sender``), keeping every promise of the httpx2 path.

The async SDK client of a Gemini instance is an ``httpx2`` client on httpx-aiohttp's transport (built by
``llmplex.http.sdk_async_client``). Each behaviour runs ``direct`` (the default) and ``httpx``
(``DirectSender.usable`` forced false: ``httpx2.AsyncClient.send``), with the helpers of
``tests/speed/test_item_3_direct_aiohttp.py``; the lean path against the SDK's own ``generate_content`` is
``tests/speed/test_item_2_gemini_lean.py``'s. Every call goes over a real socket to a local server; answers are
shaped as https://ai.google.dev/api/generate-content documents them (``tests/plugins/gemini/wire.py``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest
from llmplex_gemini import generate as gemini_generate
from llmplex_gemini.clients import create_async_client
from llmplex_gemini.settings import GeminiSettings

import llmplex
from tests.plugins.gemini.wire import MODEL, response, text_part, usage
from tests.speed.test_item_3_direct_aiohttp import (
    DEADLINE_FAULTS,
    FAULTS,
    WAYS,
    _both,
    _KeepAliveServer,
    _outcome,
    _timings_hidden,
    _way,
    cancelled_mid_read_leaves_nothing,
    direct_post_ends_at_the_deadline,
)
from tests.support.fault_server import FaultServer
from tests.support.stream_server import Reply, StreamServer

KEY = "AIzaSyDIRECT_0123456789abcdefghijklmnop"
ANSWER = response([text_part("Hello! How can I help?")], usage_metadata=usage(5, 7))
PATH = f"/v1/models/{MODEL}:generateContent"


def _llm(root: str, **settings: Any) -> llmplex.Client:
    instance = {"plugin": "gemini", "base_url": root, "api_key": KEY, **settings}
    return llmplex.Client(providers={"g": instance}, throttle={"max_attempts": 1})


def _stable(outcome: tuple[object, ...]) -> tuple[object, ...]:
    """An outcome with an SDK model's HTTP response (its date and request id differ per call) left out."""
    if len(outcome) == 2 and hasattr(outcome[1], "sdk_http_response"):
        return outcome[0], outcome[1].model_dump(exclude={"sdk_http_response"})  # type: ignore[attr-defined]
    return outcome


def _sdk_client(llm: llmplex.Client) -> Any:
    (route,) = llm.router.instances()
    return route.clients.get(asynchronous=True)


def test_item_3_gemini_async_client_sends_through_aiohttp() -> None:
    async def build() -> Any:
        client = create_async_client(GeminiSettings(api_key=KEY))
        http = client._api_client._async_httpx_client
        await http.aclose()
        return http

    http = asyncio.run(build())
    assert isinstance(http, httpx2.AsyncClient)
    assert type(http._transport).__module__.startswith("httpx_aiohttp")


@pytest.mark.parametrize("timeout", [None, 30.0])
def test_item_3_gemini_direct_post_sends_the_same_request_and_reads_the_same_answer(
    timeout: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = {} if timeout is None else {"timeout": timeout}
    with StreamServer() as server:
        server.script(Reply.json(200, json.dumps(ANSWER).encode()))
        llm = _llm(server.url, **settings)
        direct, through_httpx = _both(
            monkeypatch, lambda: _outcome(lambda: llm.acomplete(f"g:{MODEL}", "hi", system="Be brief."))
        )
        first, second = server.requests
    assert direct == through_httpx and direct[1] == ANSWER  # the plain answer, as decoded
    assert (first.method, first.path, first.body) == (second.method, second.path, second.body)
    assert first.path == PATH and json.loads(first.body)["systemInstruction"] == {
        "parts": [{"text": "Be brief."}],
        "role": "user",
    }
    assert first.headers == second.headers if timeout is None else True
    assert _timings_hidden(first.headers) == _timings_hidden(second.headers)
    names = [name for name, _ in first.headers]
    assert names[0] == "host" and names[-1] == "content-length" and "x-goog-api-key" in names
    assert ("x-server-timeout" in names) is (timeout is not None)


def test_item_3_gemini_answers_the_lean_path_leaves_to_the_sdk_models_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """An answer the parser does not read as it is (safety ratings) is the SDK's model either way."""
    rated = response(
        [text_part("Hi")], safety_ratings=[{"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}]
    )
    with StreamServer() as server:
        server.script(Reply.json(200, json.dumps(rated).encode(), {"x-goog-request-id": "r1"}))
        llm = _llm(server.url)
        direct, through_httpx = _both(monkeypatch, lambda: _outcome(lambda: llm.acomplete(f"g:{MODEL}", "hi")))
    assert _stable(direct) == _stable(through_httpx) and direct[0]["text"] == "Hi"  # type: ignore[index]
    assert type(direct[1]).__name__ == "GenerateContentResponse"
    for raw in (direct[1], through_httpx[1]):
        assert raw.sdk_http_response.headers["x-goog-request-id"] == "r1"  # type: ignore[attr-defined]


@pytest.mark.parametrize("fault", list(FAULTS))
def test_item_3_gemini_each_fault_ends_alike_both_ways(fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same llmplex error type, message and context for each fault of the fault server."""
    with FaultServer(FAULTS[fault], any_path=True) as server:
        root = server.url.removesuffix("/v1")
        direct, through_httpx = _both(monkeypatch, lambda: _outcome(lambda: _llm(root).acomplete(f"g:{MODEL}", "hi")))
    assert _stable(direct) == _stable(through_httpx)
    assert KEY not in repr(direct)


@pytest.mark.parametrize("fault", DEADLINE_FAULTS)
def test_item_3_gemini_direct_post_ends_at_the_deadline(fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    direct_post_ends_at_the_deadline(fault, monkeypatch, _llm, f"g:{MODEL}")


def test_item_3_gemini_cancelled_mid_read_leaves_no_connection_or_task(monkeypatch: pytest.MonkeyPatch) -> None:
    cancelled_mid_read_leaves_nothing(
        monkeypatch,
        _llm,
        f"g:{MODEL}",
        lambda llm: _sdk_client(llm)._api_client._async_httpx_client._transport.client.connector,
    )


def test_item_3_gemini_256_calls_in_flight_all_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    async def many(llm: llmplex.Client) -> list[str]:
        answers = await asyncio.gather(*(llm.acomplete(f"g:{MODEL}", "hi") for _ in range(256)))
        await llm.aclose()
        return [answer.text for answer in answers]

    with _KeepAliveServer(json.dumps(ANSWER).encode()) as server, _way(monkeypatch, "direct") as posts:
        texts = asyncio.run(many(_llm(f"http://127.0.0.1:{server.port}")))
    assert texts == ["Hello! How can I help?"] * 256 and len(posts) == 256


@pytest.mark.parametrize("way", WAYS)
def test_item_3_gemini_payloads_the_lean_path_cannot_write_go_through_the_sdk(
    way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``response_schema`` (the SDK's ``Schema``) is the SDK's own call, on the same aiohttp-backed client."""
    prepared: list[object] = []
    prepare = gemini_generate.prepare
    monkeypatch.setattr(gemini_generate, "prepare", lambda *a, **k: prepared.append(prepare(*a, **k)) or prepared[-1])
    with StreamServer() as server, _way(monkeypatch, way) as posts:
        server.script(Reply.json(200, json.dumps(ANSWER).encode()))
        llm = _llm(server.url)
        outcome = _outcome(
            lambda: llm.acomplete(f"g:{MODEL}", "hi", provider_options={"response_schema": {"type": "OBJECT"}})
        )
        (sent,) = server.requests
    assert prepared == [None] and not posts
    assert outcome[0]["text"] == "Hello! How can I help?"
    assert json.loads(sent.body)["generationConfig"] == {"responseSchema": {"type": "OBJECT"}}
