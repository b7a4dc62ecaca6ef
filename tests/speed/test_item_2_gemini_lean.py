"""Issue 34 item 2: llmplex-gemini's lean ``generateContent`` sends the SDK's request and reads its answer alike.

The request: for representative payloads (text, a system instruction, tools and tool config, generation options,
safety settings, inline and file data, thoughts and signatures, thinking config, JSON mode with a JSON Schema) the
lean request's method, URL, headers (in order), body bytes and timeouts equal what google-genai itself hands its
``httpx2`` client, captured at the transport (``httpx2.MockTransport``), sync and async; payloads the lean path
cannot write byte for byte go through the SDK. The answer: through ``llmplex.Client`` against a local server,
each answer and each error reads the same through the SDK and lean. Answers are shaped as
https://ai.google.dev/api/generate-content documents them (``tests/plugins/gemini/wire.py``).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import types
from llmplex_gemini import generate as gemini_generate
from llmplex_gemini import hooks as gemini_hooks
from llmplex_gemini import plain as gemini_plain
from llmplex_gemini.clients import close_client, create_async_client, create_client
from llmplex_gemini.settings import GeminiSettings

import llmplex
from llmplex import LLMError
from tests.plugins.gemini.wire import MODEL, error_body, function_call_part, response, text_part, usage
from tests.speed.gemini_payloads import KEY, LEAN_PAYLOADS, SDK_PAYLOADS, SETTINGS, SIGNATURE, TURN, sdk_config
from tests.support.stream_server import Reply, StreamServer

ANSWER = response([text_part("Hello!")], usage_metadata=usage(5, 2))


def _captured(is_async: bool, send: Callable[[genai.Client], Any], settings: GeminiSettings) -> list[httpx2.Request]:
    """The requests ``send`` makes through a client of ours, captured at its ``httpx2`` transport."""
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        request.read()
        seen.append(request)
        return httpx2.Response(200, json=ANSWER)

    if is_async:

        async def run() -> None:
            client = create_async_client(settings)
            client._api_client._async_httpx_client._transport = httpx2.MockTransport(handler)
            await send(client)
            await close_client(client)  # type: ignore[misc]

        asyncio.run(run())
    else:
        client = create_client(settings)
        client._api_client._httpx_client._transport = httpx2.MockTransport(handler)
        send(client)
        close_client(client)
    return seen


def _sdk_and_lean(payload: dict[str, Any], is_async: bool, settings: GeminiSettings = SETTINGS) -> list[httpx2.Request]:
    """The SDK's request for ``payload``, then the lean one."""
    if is_async:

        async def both(client: genai.Client) -> None:
            await client.aio.models.generate_content(**payload)
            lean = gemini_generate.prepare(client, payload, is_async=True)
            assert lean is not None
            await lean.asend()

        return _captured(True, both, settings)

    def sync_both(client: genai.Client) -> None:
        client.models.generate_content(**payload)
        lean = gemini_generate.prepare(client, payload, is_async=False)
        assert lean is not None
        lean.send()

    return _captured(False, sync_both, settings)


def _same_request(sdk: httpx2.Request, lean: httpx2.Request) -> None:
    assert lean.method == sdk.method
    assert str(lean.url) == str(sdk.url)
    assert lean.headers.raw == sdk.headers.raw
    assert lean.content == sdk.content
    assert lean.extensions == sdk.extensions


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", list(LEAN_PAYLOADS))
def test_item_2_gemini_lean_request_is_the_sdks_byte_for_byte(name: str, is_async: bool) -> None:
    payload = LEAN_PAYLOADS[name]()
    sdk, lean = _sdk_and_lean(payload, is_async)
    _same_request(sdk, lean)
    assert b"x-goog-api-key" in [key.lower() for key, _ in lean.headers.raw]


@pytest.mark.parametrize("timeout", [None, 0.0015, 2.5, 600.0])
def test_item_2_gemini_lean_request_keeps_the_clients_timeout(timeout: float | None) -> None:
    """The configured timeout (``HttpOptions.timeout``) gives the same ``X-Server-Timeout`` and socket timeouts."""
    settings = GeminiSettings(api_key=KEY, timeout=timeout, base_url="http://127.0.0.1:9/gemini/")
    payload = {"model": MODEL, "contents": TURN, "config": sdk_config()}
    for is_async in (False, True):
        _same_request(*_sdk_and_lean(payload, is_async, settings))


def test_item_2_gemini_lean_request_streamed_url() -> None:
    """A stream's request (``streamGenerateContent?alt=sse``) is the SDK's too."""

    def both(client: genai.Client) -> None:
        payload = LEAN_PAYLOADS["tools and a forced choice"]()
        list(client.models.generate_content_stream(**payload))
        lean = gemini_generate.prepare(client, payload, is_async=False, stream=True)
        assert lean is not None
        client._api_client._httpx_client.send(lean.request())

    sdk, lean = _captured(False, both, SETTINGS)
    assert str(sdk.url).endswith(":streamGenerateContent?alt=sse")
    _same_request(sdk, lean)


@pytest.mark.parametrize("name", list(SDK_PAYLOADS))
def test_item_2_gemini_what_the_lean_path_cannot_write_goes_through_the_sdk(name: str) -> None:
    client = create_client(SETTINGS)
    try:
        assert gemini_generate.prepare(client, SDK_PAYLOADS[name], is_async=False) is None
    finally:
        close_client(client)


def test_item_2_gemini_clients_not_ours_go_through_the_sdk() -> None:
    payload = LEAN_PAYLOADS["text"]()
    foreign = genai.Client(api_key=KEY)
    vertex = genai.Client(vertexai=True, project="p", location="us-central1")
    assert gemini_generate.prepare(foreign, payload, is_async=False) is None
    assert gemini_generate.prepare(vertex, payload, is_async=False) is None
    assert gemini_generate.prepare(object(), payload, is_async=False) is None
    ours = create_client(SETTINGS)
    try:
        assert gemini_generate.prepare(ours, payload, is_async=True) is None  # the sync client on the async path
        assert gemini_generate.prepare(ours, {**payload, "model": "a/../b"}, is_async=False) is None
    finally:
        close_client(ours)


# -- answers, through llmplex.Client against a local server -----------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[StreamServer]:
    with StreamServer() as running:
        yield running


@pytest.fixture
def via(monkeypatch: pytest.MonkeyPatch) -> Callable[[bool], list[type]]:
    """Choose the SDK (``True``) or the lean path; the types the parser was handed are recorded."""
    prepare = gemini_generate.prepare
    handed: list[type] = []
    for module in (gemini_hooks, gemini_plain):  # the SDK model's parser, the plain answer's
        parse = module.parse_response
        monkeypatch.setattr(module, "parse_response", _recording(parse, handed))

    def choose(sdk: bool) -> list[type]:
        monkeypatch.setattr(gemini_generate, "prepare", (lambda *a, **k: None) if sdk else prepare)
        return handed

    return choose


def _recording(parse: Callable[[Any, Any], Any], handed: list[type]) -> Callable[[Any, Any], Any]:
    def recorded(raw: Any, request: Any) -> Any:
        handed.append(type(raw))
        return parse(raw, request)

    return recorded


def _outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        answer = call()
    except LLMError as error:
        wait = (getattr(error, "status_code", None), getattr(error, "retry_after", None))
        return type(error), str(error), wait
    return (
        answer.text,
        answer.tool_calls,
        answer.finish_reason,
        answer.usage,
        answer.model,
        answer.response_id,
        answer.reasoning,
    )


def _both(server: StreamServer, via: Callable[[bool], list[type]], reply: Reply, **kwargs: Any) -> list[Any]:
    """The outcome through the SDK, then lean, sync then async; the types the parser got."""
    config = {"providers": {"g": {"plugin": "gemini", "base_url": server.url, "api_key": KEY}}}
    client = llmplex.Client(config, throttle={"max_attempts": 1})
    outcomes: list[Any] = []
    try:
        for sdk in (True, False):
            via(sdk)
            server.script(reply)
            outcomes.append(_outcome(lambda: client.complete(f"g:{MODEL}", "hi", **kwargs)))

        async def run() -> None:
            for sdk in (True, False):
                via(sdk)
                server.script(reply)
                try:
                    outcomes.append((await client.acomplete(f"g:{MODEL}", "hi", **kwargs),))
                except LLMError as error:
                    outcomes.append((error,))

        asyncio.run(run())
    finally:
        client.close()
    for index in (2, 3):
        outcomes[index] = _outcome(lambda i=index: _raise_or_return(outcomes[i][0]))
    return outcomes


def _raise_or_return(value: Any) -> Any:
    if isinstance(value, BaseException):
        raise value
    return value


ANSWERS: dict[str, dict[str, Any]] = {
    "text": response([text_part("Hello!")], usage_metadata=usage(5, 2, thoughts=3, cached=4)),
    "tool calls": response(
        [
            text_part("Checking."),
            function_call_part("get_weather", {"city": "Paris"}, "call_1"),
            function_call_part("f", {}),
        ],
        usage_metadata=usage(9, 4),
    ),
    "thoughts and a signature (the SDK's model)": response(
        [text_part("Let me think.", thought=True), {"text": "42", "thoughtSignature": SIGNATURE}],
        usage_metadata=usage(5, 1, thoughts=3),
    ),
    "max tokens, audio usage": response(
        [text_part("Hi")],
        finish_reason="MAX_TOKENS",
        usage_metadata={
            **usage(7, 2, cached=4),
            "promptTokensDetails": [{"modality": "AUDIO", "tokenCount": 7}],
            "cacheTokensDetails": [{"modality": "AUDIO", "tokenCount": 4}],
        },
    ),
    "safety ratings (the SDK's model)": response(
        [text_part("Hi")], safety_ratings=[{"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}]
    ),
    "withheld": response([], finish_reason="SAFETY"),
    "prompt blocked (the SDK's model)": {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": usage(3, 0)},
    "no candidates": {"usageMetadata": usage(3, 0)},
    "empty": {},
}


@pytest.mark.parametrize("name", list(ANSWERS))
def test_item_2_gemini_plain_answer_parses_as_the_sdks(
    name: str, server: StreamServer, via: Callable[[bool], list[type]]
) -> None:
    handed = via(True)
    sdk, lean, asdk, alean = _both(server, via, Reply.json(200, json.dumps(ANSWERS[name]).encode()))
    assert sdk == lean and asdk == alean and sdk == asdk
    plain = "(the SDK's model)" not in name
    sdk_types, lean_types = handed[0::2], handed[1::2]  # each call's SDK run, then its lean run
    if sdk_types:
        assert set(sdk_types) == {types.GenerateContentResponse}
        assert set(lean_types) == ({dict} if plain else {types.GenerateContentResponse})


ERRORS: dict[str, Reply] = {
    "400": Reply.json(400, json.dumps(error_body(400, "INVALID_ARGUMENT", "bad")).encode()),
    "bad key": Reply.json(
        400,
        json.dumps(
            error_body(
                400,
                "INVALID_ARGUMENT",
                "API key not valid.",
                [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}],
            )
        ).encode(),
    ),
    "429 with a retry delay": Reply.json(
        429,
        json.dumps(
            error_body(
                429,
                "RESOURCE_EXHAUSTED",
                "quota",
                [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}],
            )
        ).encode(),
    ),
    "503": Reply.json(503, json.dumps(error_body(503, "UNAVAILABLE", "overloaded")).encode(), {"Retry-After": "3"}),
    "500 not JSON": Reply.json(500, b"<html>oops</html>"),
    "200 not JSON": Reply.json(200, b"not json"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_item_2_gemini_lean_errors_are_the_sdks(
    name: str, server: StreamServer, via: Callable[[bool], list[type]]
) -> None:
    sdk, lean, asdk, alean = _both(server, via, ERRORS[name])
    assert sdk == lean and asdk == alean
    assert isinstance(sdk[0], type) and issubclass(sdk[0], LLMError)


def test_item_2_gemini_answers_through_llmplex_go_lean(server: StreamServer, via: Callable[[bool], list[type]]) -> None:
    """Without any switch, an llmplex call on a client of ours takes the lean path (its answer a plain dict)."""
    handed = via(False)
    server.requests.clear()
    _both(server, via, Reply.json(200, json.dumps(ANSWERS["text"]).encode()))
    assert handed[1] is dict and handed[3] is dict
    assert server.requests[0] == server.requests[1]


def _resumable(text: str, token: bytes) -> dict[str, Any]:
    """An answer that ends resumable: ``CONTINUATION`` with a ``continuationToken`` on its candidate."""
    body = response([text_part(text)], finish_reason="CONTINUATION", usage_metadata=usage(5, 2))
    body["candidates"][0]["continuationToken"] = base64.b64encode(token).decode()
    types.GenerateContentResponse.model_validate(body)
    return body


@pytest.mark.parametrize("turned_off", [False, True], ids=["followed", "turned off"])
def test_item_2_gemini_continued_answer_is_followed_as_the_sdk_follows_it(
    turned_off: bool, server: StreamServer, via: Callable[[bool], list[type]]
) -> None:
    """A first answer ending resumable is followed by the SDK's own requests (the token sent back) and merged as
    ``generate_content`` merges them, unless ``automatic_continuation`` is off; the lean first request is the
    SDK's."""
    replies = (
        Reply.json(200, json.dumps(_resumable("Hel", b"hop-1")).encode()),
        Reply.json(200, json.dumps(response([text_part("lo!")], usage_metadata=usage(6, 3))).encode()),
    )
    options = {"provider_options": {"automatic_continuation": False}} if turned_off else {}
    config = {"providers": {"g": {"plugin": "gemini", "base_url": server.url, "api_key": KEY}}}
    client = llmplex.Client(config, throttle={"max_attempts": 1})
    outcomes, sent = [], []
    try:
        for sdk in (True, False):
            via(sdk)
            server.script(*replies)
            server.requests.clear()
            outcomes.append(_outcome(lambda: client.complete(f"g:{MODEL}", "hi", **options)))
            sent.append([(r.path, r.body) for r in server.requests])
    finally:
        client.close()
    assert outcomes[0] == outcomes[1]
    assert sent[0] == sent[1] and len(sent[0]) == (1 if turned_off else 2)
    if not turned_off:
        assert json.loads(sent[1][1][1])["continuationToken"] == base64.b64encode(b"hop-1").decode()


def test_item_2_gemini_lean_request_carries_the_clients_cookies_as_the_sdks() -> None:
    """A cookie a server set is sent back on the lean request as on the SDK's (``build_request`` merges it)."""
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        request.read()
        seen.append(request)
        return httpx2.Response(200, json=ANSWER, headers={"set-cookie": "session=abc; Path=/"})

    client = create_client(SETTINGS)
    client._api_client._httpx_client._transport = httpx2.MockTransport(handler)
    payload = LEAN_PAYLOADS["text"]()
    try:
        client.models.generate_content(**payload)  # sets the cookie
        client.models.generate_content(**payload)
        lean = gemini_generate.prepare(client, payload, is_async=False)
        assert lean is not None
        lean.send()
    finally:
        close_client(client)
    _same_request(seen[1], seen[2])
    assert seen[2].headers["cookie"] == "session=abc"
