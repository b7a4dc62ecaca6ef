"""Issue 34 item 4: llmplex-gemini's lean stream writes its request without the SDK's pydantic models.

``streamGenerateContent?alt=sse`` is sent with ``generate.prepare(..., stream=True)``'s request: for every payload of
``tests/speed/test_item_2_gemini_lean.py`` its method, URL, headers, body bytes and timeouts equal what the SDK's
``generate_content_stream`` hands its ``httpx2`` client, sync and async; a plain stream builds no SDK request model
at all. How the stream is read, its errors, faults and deadlines: ``tests/speed/test_item_4_gemini_lean_stream.py`` and
``test_item_4_gemini_lean_stream_faults.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import models, types
from llmplex_gemini import chunks
from llmplex_gemini import lean as gemini_lean
from llmplex_gemini.clients import close_client, create_async_client, create_client

from tests.plugins.gemini.wire import MODEL, function_call_part, response, stream_body, text_part, usage
from tests.speed.gemini_payloads import LEAN_PAYLOADS, SETTINGS, TURN

STREAM = stream_body(
    [
        response([text_part("Hel")], finish_reason=None, usage_metadata=usage(5, 1)),
        response([text_part("lo!")], usage_metadata=usage(5, 2)),
    ]
)


def _handler(seen: list[httpx2.Request]) -> httpx2.MockTransport:
    def handle(request: httpx2.Request) -> httpx2.Response:
        request.read()
        seen.append(request)
        return httpx2.Response(200, content=STREAM, headers={"content-type": "text/event-stream"})

    return httpx2.MockTransport(handle)


def _sync(payload: dict[str, Any]) -> tuple[list[httpx2.Request], list[Any]]:
    seen: list[httpx2.Request] = []
    client = create_client(SETTINGS)
    client._api_client._httpx_client._transport = _handler(seen)
    try:
        list(client.models.generate_content_stream(**payload))
        lean = gemini_lean.prepare(client, payload, is_async=False)
        assert lean is not None
        chunks = list(lean.open())
    finally:
        close_client(client)
    return seen, chunks


def _async(payload: dict[str, Any]) -> tuple[list[httpx2.Request], list[Any]]:
    seen: list[httpx2.Request] = []

    async def run() -> list[Any]:
        client = create_async_client(SETTINGS)
        client._api_client._async_httpx_client._transport = _handler(seen)
        try:
            async for _ in await client.aio.models.generate_content_stream(**payload):
                pass
            lean = gemini_lean.prepare(client, payload, is_async=True)
            assert lean is not None
            return [chunk async for chunk in await lean.aopen()]
        finally:
            await close_client(client)  # type: ignore[misc]

    chunks = asyncio.run(run())
    return seen, chunks


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", list(LEAN_PAYLOADS))
def test_item_4_gemini_stream_request_is_the_sdks_byte_for_byte(name: str, is_async: bool) -> None:
    (sdk, lean), chunks = (_async if is_async else _sync)(LEAN_PAYLOADS[name]())
    assert str(sdk.url).endswith(":streamGenerateContent?alt=sse")
    assert (lean.method, str(lean.url), lean.headers.raw, lean.content, lean.extensions) == (
        sdk.method,
        str(sdk.url),
        sdk.headers.raw,
        sdk.content,
        sdk.extensions,
    )
    assert [type(chunk) for chunk in chunks] == [tuple, tuple]  # text chunks: each read once (``chunks.TextChunk``)


@pytest.fixture
def sdk_models_built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each SDK request model or converter run, by name."""
    built: list[str] = []
    for owner, name in (
        (types, "_GenerateContentParameters"),
        (types.GenerateContentConfig, "model_validate"),
        (models, "_GenerateContentParameters_to_mldev"),
    ):
        original = getattr(owner, name)
        monkeypatch.setattr(owner, name, lambda *a, _o=original, _n=name, **k: (built.append(_n), _o(*a, **k))[1])
    return built


def test_item_4_gemini_plain_stream_builds_no_sdk_request_model(sdk_models_built: list[str]) -> None:
    payload = LEAN_PAYLOADS["tools and a forced choice"]()
    seen: list[httpx2.Request] = []
    client = create_client(SETTINGS)
    client._api_client._httpx_client._transport = _handler(seen)
    try:
        lean = gemini_lean.prepare(client, payload, is_async=False)
        assert lean is not None
        chunks = list(lean.open())
    finally:
        close_client(client)
    assert [type(chunk) for chunk in chunks] == [tuple, tuple] and len(seen) == 1
    assert sdk_models_built == []


@pytest.mark.parametrize(
    ("config", "lean"),
    [
        ({"automatic_continuation": False}, True),
        ({"automatic_continuation": "no"}, False),
        ({"tools": [{"function_declarations": [{"name": "f"}]}], "automatic_function_calling": {}}, False),
        ({"response_schema": {"type": "OBJECT"}}, False),
    ],
)
def test_item_4_gemini_stream_lean_or_sdk(config: dict[str, Any], lean: bool) -> None:
    client: genai.Client = create_client(SETTINGS)
    try:
        prepared = gemini_lean.prepare(client, {"model": MODEL, "contents": TURN, "config": config}, is_async=False)
        assert (prepared is not None) is lean
    finally:
        close_client(client)


def _variants() -> list[Any]:
    """Chunks near the common one: each field missing, null, of another JSON type, or unknown."""
    base = response([text_part("Hi"), text_part("hm", thought=True)], usage_metadata=usage(5, 2, thoughts=1))
    found: list[Any] = [base, {}, [], None, "x", response([function_call_part("f", {"a": 1}, "c")])]
    found.append(
        {**base, "usageMetadata": {**usage(5, 2), "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 5}]}}
    )
    others = (None, True, 1, 1.0, "x", "STOP", [], {}, [{}], [None])
    candidate = base["candidates"][0]
    for key in (*base, "promptFeedback"):
        found.extend({**base, key: value} for value in others)
    for key in (*candidate, "safetyRatings", "continuationToken"):
        found.extend({**base, "candidates": [{**candidate, key: value}]} for value in others)
    for key in ("role", "parts", "extra"):
        found.extend(
            {**base, "candidates": [{**candidate, "content": {**candidate["content"], key: value}}]} for value in others
        )
    for key in ("text", "thought", "functionCall", "thoughtSignature"):
        found.extend(
            {**base, "candidates": [{**candidate, "content": {"role": "model", "parts": [{"text": "a", key: value}]}}]}
            for value in others
        )
    for key in ("promptTokenCount", "trafficType", "cacheTokensDetails"):
        found.extend({**base, "usageMetadata": {**base["usageMetadata"], key: value}} for value in others)
    for key in ("modality", "tokenCount", "extra"):
        detail = {"modality": "AUDIO", "tokenCount": 3}
        found.extend(
            {**base, "usageMetadata": {**base["usageMetadata"], "promptTokensDetails": [{**detail, key: value}]}}
            for value in others
        )
    return found


def test_item_4_gemini_fast_plain_check_agrees_with_the_full_one() -> None:
    """The one-pass check of the common chunk says plain only where the full field-by-field check does, and
    ``is_plain`` is the full check's answer on every variant."""
    variants = _variants()
    assert sum(chunks.text_chunk(v) is not None for v in variants) > 20
    for variant in variants:
        assert chunks.is_plain(variant) is chunks._CHUNK(variant), variant
        assert chunks.text_chunk(variant) is None or chunks._CHUNK(variant), variant


def test_item_4_gemini_chunk_events_equal_the_validated_ones() -> None:
    """The text and usage events of a stream's last plain chunk (the text one built by ``StreamEvent.text_delta``)
    equal ``StreamEvent(...)`` in every way: fields, fields set, ``==``, hash, dump."""
    from llmplex_gemini.streaming import parse_chunk

    from llmplex.types import Message, Request, StreamEvent, StreamState

    chunk = response([text_part("Hel")], finish_reason="STOP", usage_metadata=usage(5, 1))
    state = StreamState(request=Request(model=MODEL, messages=(Message.user("hi"),)))
    text, used, _finish = parse_chunk(chunk, state)
    common = {"response_id": chunk["responseId"], "model": chunk["modelVersion"]}
    expected = [
        StreamEvent(type="text", text="Hel", **common),
        StreamEvent(type="usage", usage=used.usage, **common),
    ]
    for event, validated in zip((text, used), expected, strict=True):
        assert event == validated and hash(event) == hash(validated)
        assert event.model_fields_set == validated.model_fields_set
        assert event.model_dump() == validated.model_dump()
    assert used.usage is not None and (used.usage.input_tokens, used.usage.output_tokens) == (5, 1)
