"""Issue 14 item 3 and issue 34 item 4: llmplex-anthropic's lean streams send what the SDK sends and read its
event stream with llmplex.http's SSE parser: the same request bytes, the same events and final response, the same
errors, and an early break or an error closes the response.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest
from llmplex_anthropic import hooks, lean
from llmplex_anthropic.clients import create_async_client, create_client
from llmplex_anthropic.errors import classify_error
from llmplex_anthropic.streaming import parse_stream_event

import llmplex
from llmplex.types import Message, Request, StreamState, Tool
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http, sse
from tests.plugins.anthropic.lean_cases import (
    DEPRECATED_MODEL,
    KEY,
    PAYLOADS,
    SETTINGS,
    WEATHER_TOOL,
    facts,
    raised,
    raw_headers,
    sdk_timeout,
    sync_client,
)
from tests.plugins.anthropic.wire import MODEL, error_body, stream_body

__all__ = ["fake_http", "raw_headers", "sync_client"]


# -- streams (issue 14 item 3: a shipped plugin reads its event stream with llmplex.http's SSE parser) -------------

_WEATHER = Tool(name="get_weather", description="Weather of a city", parameters=WEATHER_TOOL["input_schema"])
STREAMS = {
    "text": lambda: stream_body(
        [{"text": ["Hel", "lo", " wörld 🌦"]}], start_usage={"input_tokens": 9, "output_tokens": 1}
    ),
    "tools": lambda: stream_body(
        [
            {"text": ["Checking."]},
            {"tool_use": ("toolu_a", "get_weather"), "json": ['{"city": ', '"Paris"}']},
            {"tool_use": ("toolu_b", "get_weather"), "json": ['{"city": "Rome"}']},
            {"tool_use": ("toolu_c", "get_weather"), "json": ["", '{"city": "Oslo"}']},
        ],
        stop_reason="tool_use",
    ),
}


@pytest.fixture
def sse_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The event streams the lean path read through ``llmplex.http.iter_sse`` / ``aiter_sse``."""
    seen: list[str] = []
    real_iter, real_aiter = lean.iter_sse, lean.aiter_sse

    def iter_sse(chunks: Any) -> Any:
        seen.append("iter_sse")
        return real_iter(chunks)

    def aiter_sse(chunks: Any) -> Any:
        seen.append("aiter_sse")
        return real_aiter(chunks)

    monkeypatch.setattr(lean, "iter_sse", iter_sse)
    monkeypatch.setattr(lean, "aiter_sse", aiter_sse)
    return seen


def _lean_stream(client: anthropic.Anthropic, payload: dict[str, Any], timeout: float | None = 5.0) -> Any:
    return hooks.llmplex_stream(payload=payload, settings=SETTINGS, client=client, timeout=timeout)


def _core_events(raw_events: list[Any]) -> list[Any]:
    state = StreamState(request=Request(model=MODEL, messages=(Message.user("?"),)))
    return [event.model_dump() for raw in raw_events for event in parse_stream_event(raw, state)]


@pytest.mark.parametrize("timeout", [None, 12.5])
@pytest.mark.parametrize("name", PAYLOADS)
def test_item_3_lean_stream_request_is_byte_identical_to_the_sdks(
    sync_client: anthropic.Anthropic,
    fake_http: FakeHTTP,
    raw_headers: list[list[tuple[bytes, bytes]]],
    sse_reads: list[str],
    name: str,
    timeout: float | None,
) -> None:
    payload = PAYLOADS[name]
    fake_http.reply_stream(STREAMS["text"]())
    fake_http.reply_stream(STREAMS["text"]())
    list(_lean_stream(sync_client, payload, timeout))
    assert sse_reads == ["iter_sse"], "the stream did not take the lean path"
    list(sync_client.messages.create(**payload, stream=True, **sdk_timeout(timeout)))
    lean_sent, sdk_sent = fake_http.sent
    assert lean_sent.url == sdk_sent.url == "https://api.anthropic.com/v1/messages"
    assert lean_sent.body == sdk_sent.body
    assert lean_sent.json()["stream"] is True
    assert raw_headers[0] == raw_headers[1]


@pytest.mark.parametrize("name", STREAMS)
def test_item_3_lean_stream_events_and_response_are_the_sdks(
    fake_http: FakeHTTP, sse_reads: list[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    client = create_client(SETTINGS)
    fake_http.reply_stream(STREAMS[name]())
    fake_http.reply_stream(STREAMS[name]())
    lean_raw = list(_lean_stream(client, PAYLOADS["plain"]))
    sdk_raw = list(client.messages.create(**PAYLOADS["plain"], stream=True, timeout=5.0))
    client.close()
    assert sse_reads == ["iter_sse"]
    # plain decoded data, as llmplex-openai's streams (issue 34 item 4): the SDK's models hold the same data
    assert all(type(event) is dict for event in lean_raw)
    assert lean_raw == [event.model_dump(mode="json", exclude_unset=True) for event in sdk_raw]
    assert _core_events(lean_raw) == _core_events(sdk_raw)
    # and through the whole client: the same assembled Response
    responses = []
    for lean_on in (True, False):
        if not lean_on:
            monkeypatch.setattr(hooks, "sender", lambda *args, **kwargs: None)
        fake_http.reply_stream(STREAMS[name]())
        llm = llmplex.Client(providers={"anthropic": {"plugin": "anthropic", "api_key": KEY}})
        events = list(llm.stream(f"anthropic:{MODEL}", "Weather?", tools=[_WEATHER]))
        llm.close()
        final = events[-1].response
        assert final is not None
        responses.append((final.text, final.tool_calls, final.usage, final.finish_reason, final.response_id))
    assert sse_reads == ["iter_sse", "iter_sse"]
    assert responses[0] == responses[1]
    if name == "tools":
        assert [call.id for call in responses[0][1]] == ["toolu_a", "toolu_b", "toolu_c"]


@pytest.mark.parametrize("name", STREAMS)
async def test_item_3_lean_async_stream_is_the_sdks(fake_http: FakeHTTP, sse_reads: list[str], name: str) -> None:
    client = create_async_client(SETTINGS)
    fake_http.reply_stream(STREAMS[name]())
    fake_http.reply_stream(STREAMS[name]())
    events = await hooks.llmplex_astream(payload=PAYLOADS["everything"], settings=SETTINGS, client=client, timeout=7.0)
    lean_raw = [event async for event in events]
    sdk_stream = await client.messages.create(**PAYLOADS["everything"], stream=True, timeout=7.0)
    sdk_raw = [event async for event in sdk_stream]
    await client.close()
    assert sse_reads == ["aiter_sse"]
    lean_sent, sdk_sent = fake_http.sent
    assert (lean_sent.url, lean_sent.body, lean_sent.headers) == (sdk_sent.url, sdk_sent.body, sdk_sent.headers)
    assert lean_raw == [event.model_dump(mode="json", exclude_unset=True) for event in sdk_raw]
    assert _core_events(lean_raw) == _core_events(sdk_raw)


@pytest.mark.parametrize(
    "answer",
    [
        {"status": 429, "json_body": error_body("rate_limit_error", "slow down"), "headers": {"retry-after": "7"}},
        {
            "status": 529,
            "json_body": error_body("overloaded_error", "Overloaded"),
            "headers": {"retry-after-ms": "1500"},
        },
        {"status": 502, "text": "<html>Bad Gateway</html>", "content_type": "text/html"},
    ],
    ids=["429", "529", "html-502"],
)
def test_item_3_lean_stream_opening_error_fails_as_through_the_sdk(
    sync_client: anthropic.Anthropic, fake_http: FakeHTTP, sse_reads: list[str], answer: dict[str, Any]
) -> None:
    fake_http.reply(**answer)
    fake_http.reply(**answer)
    lean_error = raised(lambda: _lean_stream(sync_client, PAYLOADS["plain"]))
    sdk_error = raised(lambda: sync_client.messages.create(**PAYLOADS["plain"], stream=True, timeout=5.0))
    assert type(lean_error) is type(sdk_error)
    assert str(lean_error) == str(sdk_error)
    lean_classified, sdk_classified = classify_error(lean_error), classify_error(sdk_error)
    assert lean_classified is not None and sdk_classified is not None
    assert facts(lean_classified) == facts(sdk_classified)
    assert sse_reads == []  # failed before any event was read


ERROR_EVENT = sse([("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})])


@pytest.mark.parametrize("body", [ERROR_EVENT, STREAMS["text"]().split(b"event: content_block_delta")[0] + ERROR_EVENT])
def test_item_3_lean_stream_error_event_raises_as_through_the_sdk(
    sync_client: anthropic.Anthropic, fake_http: FakeHTTP, sse_reads: list[str], body: bytes
) -> None:
    fake_http.reply_stream(body)
    fake_http.reply_stream(body)
    lean_error = raised(lambda: list(_lean_stream(sync_client, PAYLOADS["plain"])))
    sdk_error = raised(lambda: list(sync_client.messages.create(**PAYLOADS["plain"], stream=True, timeout=5.0)))
    assert type(lean_error) is type(sdk_error) is anthropic.APIStatusError  # status 200: the body says what failed
    assert str(lean_error) == str(sdk_error)
    lean_classified, sdk_classified = classify_error(lean_error), classify_error(sdk_error)
    assert lean_classified is not None and sdk_classified is not None
    assert facts(lean_classified) == facts(sdk_classified)
    assert type(lean_classified) is llmplex.LLMServerError
    assert sse_reads == ["iter_sse"]


class _Body(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """An event stream sent one event per chunk, that records when the client closes it."""

    def __init__(self, body: bytes) -> None:
        self.chunks = [chunk + b"\n\n" for chunk in body.split(b"\n\n") if chunk.strip()]
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks

    async def __aiter__(self) -> Any:
        for chunk in self.chunks:
            yield chunk

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


@pytest.fixture
def streamed(fake_http: FakeHTTP, monkeypatch: pytest.MonkeyPatch) -> list[_Body]:
    """Answer each request with the next queued body, streamed chunk by chunk (``_Body``)."""
    bodies: list[_Body] = []
    record = fake_http.answer

    def answer(request: httpx2.Request) -> httpx2.Response:
        queued = record(request)
        body = _Body(queued.content)
        bodies.append(body)
        return httpx2.Response(200, headers=queued.headers, stream=body, request=request)

    monkeypatch.setattr(fake_http, "answer", answer)
    return bodies


def test_item_3_lean_stream_early_break_and_error_close_the_response(
    sync_client: anthropic.Anthropic, fake_http: FakeHTTP, sse_reads: list[str], streamed: list[_Body]
) -> None:
    fake_http.reply_stream(STREAMS["tools"]())
    events = _lean_stream(sync_client, PAYLOADS["plain"])
    first = next(events)
    assert first["type"] == "message_start"
    assert not streamed[0].closed
    events.close()  # what core does when the caller breaks out
    assert streamed[0].closed
    fake_http.reply_stream(STREAMS["text"]().split(b"event: content_block_delta")[0] + ERROR_EVENT)
    with pytest.raises(anthropic.APIStatusError, match="Overloaded"):
        list(_lean_stream(sync_client, PAYLOADS["plain"]))
    assert streamed[1].closed
    assert sse_reads == ["iter_sse", "iter_sse"]


async def test_item_3_lean_async_stream_early_break_closes_the_response(
    fake_http: FakeHTTP, sse_reads: list[str], streamed: list[_Body]
) -> None:
    client = create_async_client(SETTINGS)
    fake_http.reply_stream(STREAMS["text"]())
    events = await hooks.llmplex_astream(payload=PAYLOADS["plain"], settings=SETTINGS, client=client, timeout=5.0)
    async for event in events:
        assert event["type"] == "message_start"
        break
    assert not streamed[0].closed
    await events.aclose()  # type: ignore[attr-defined]
    assert streamed[0].closed
    await client.close()
    assert sse_reads == ["aiter_sse"]


def test_item_3_lean_stream_falls_back_to_the_sdk_where_whole_answers_do(
    sync_client: anthropic.Anthropic, fake_http: FakeHTTP, sse_reads: list[str]
) -> None:
    fake_http.reply_stream(STREAMS["text"]())
    with pytest.warns(DeprecationWarning, match=DEPRECATED_MODEL):
        events = list(_lean_stream(sync_client, {**PAYLOADS["plain"], "model": DEPRECATED_MODEL}))
    assert events[0].type == "message_start"
    assert sse_reads == []
    assert lean.sender(sync_client, {**PAYLOADS["plain"], "stream": True}, 5.0, stream=True) is None
