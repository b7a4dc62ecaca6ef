"""Issue 17 item 3: the lean ``messages.create`` sends what the SDK sends, reads what it reads, fails as it fails.

The same payload goes once through the plugin's call hook (the lean path) and
once through ``client.messages.create`` on the same SDK client, over the fake
``httpx2`` network: the requests must be byte-identical (URL, headers in order,
JSON body), the parsed responses equal, and every error answer must become the
same SDK exception and the same llmplex error. A trickling body still ends the
call at its deadline, sync and async.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.resources.messages import messages as sdk_messages
from llmplex_anthropic import hooks, lean
from llmplex_anthropic.clients import create_async_client, create_client
from llmplex_anthropic.errors import classify_error
from llmplex_anthropic.response import parse_message
from llmplex_anthropic.settings import AnthropicSettings
from llmplex_anthropic.streaming import parse_stream_event

import llmplex
from llmplex import Deadline, LLMDeadlineExceededError, LLMError
from llmplex.types import Message, OutputSchema, Request, StreamState, Tool
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http, sse
from tests.plugins.anthropic.test_anthropic_errors import CASES
from tests.plugins.anthropic.wire import MODEL, error_body, message, stream_body, text_block, tool_use_block, usage
from tests.support.fault_server import Fault, FaultServer
from tests.support.late import Late

DEPRECATED_MODEL = next(iter(vars(sdk_messages)["DEPRECATED_MODELS"]))
"""A model the installed SDK warns about (its list changes between releases: anthropic 2.13 dropped claude-2.1)."""

__all__ = ["fake_http"]

KEY = "sk-ant-lean-test-0123456789abcdef"
SETTINGS = AnthropicSettings(api_key=KEY)
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Weather of a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
PAYLOADS: dict[str, dict[str, Any]] = {
    "plain": {"model": MODEL, "messages": [{"role": "user", "content": "Say hi"}], "max_tokens": 4096},
    "everything": {
        "model": MODEL,
        "messages": [
            {"role": "user", "content": "Météo à Paris ? 天気 \u2028 🌦"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "24.5C"}]},
        ],
        "max_tokens": 300,
        "stop_sequences": ["\n\nHuman:"],
        "system": "Be brief.",
        "tools": [WEATHER_TOOL],
        "tool_choice": {"type": "auto"},
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object", "properties": {}}}},
        "metadata": {"user_id": "u-1"},
    },
}


@pytest.fixture
def raw_headers(fake_http: FakeHTTP, monkeypatch: pytest.MonkeyPatch) -> list[list[tuple[bytes, bytes]]]:
    """The headers of each request that reached the fake network, as bytes on the wire (case and order kept)."""
    seen: list[list[tuple[bytes, bytes]]] = []
    answer = fake_http.answer

    def recording(request: httpx2.Request) -> httpx2.Response:
        seen.append(list(request.headers.raw))
        return answer(request)

    monkeypatch.setattr(fake_http, "answer", recording)
    return seen


@pytest.fixture
def sync_client() -> Iterator[anthropic.Anthropic]:
    client = create_client(SETTINGS)
    yield client
    client.close()


def _sdk_timeout(timeout: float | None) -> dict[str, Any]:
    return {} if timeout is None else {"timeout": timeout}


# -- the request ----------------------------------------------------------------------------


@pytest.mark.parametrize("timeout", [None, 12.5])
@pytest.mark.parametrize("name", PAYLOADS)
def test_item_3_lean_request_is_byte_identical_to_the_sdks(
    sync_client: anthropic.Anthropic,
    fake_http: FakeHTTP,
    raw_headers: list[list[tuple[bytes, bytes]]],
    name: str,
    timeout: float | None,
) -> None:
    payload = PAYLOADS[name]
    fake_http.reply(json_body=message())
    fake_http.reply(json_body=message())
    raw = hooks.llmplex_call(payload=payload, settings=SETTINGS, client=sync_client, timeout=timeout)
    assert isinstance(raw, dict), "the call did not take the lean path"
    sync_client.messages.create(**payload, **_sdk_timeout(timeout))
    lean_sent, sdk_sent = fake_http.sent
    assert lean_sent.url == sdk_sent.url == "https://api.anthropic.com/v1/messages"
    assert lean_sent.body == sdk_sent.body
    assert raw_headers[0] == raw_headers[1]
    assert lean_sent.headers["authorization"] == f"Bearer {KEY}"
    assert lean_sent.headers["anthropic-version"]


async def test_item_3_lean_async_request_is_byte_identical_to_the_sdks(
    fake_http: FakeHTTP, raw_headers: list[list[tuple[bytes, bytes]]]
) -> None:
    client = create_async_client(SETTINGS)
    payload = PAYLOADS["everything"]
    fake_http.reply(json_body=message())
    fake_http.reply(json_body=message())
    raw = await hooks.llmplex_acall(payload=payload, settings=SETTINGS, client=client, timeout=7.0)
    assert isinstance(raw, dict), "the call did not take the lean path"
    await client.messages.create(**payload, timeout=7.0)
    await client.close()
    lean_sent, sdk_sent = fake_http.sent
    assert (lean_sent.url, lean_sent.body) == (sdk_sent.url, sdk_sent.body)
    assert raw_headers[0] == raw_headers[1]


def test_item_3_a_local_instance_posts_to_its_own_base_url(
    fake_http: FakeHTTP, raw_headers: list[list[tuple[bytes, bytes]]]
) -> None:
    client = create_client(AnthropicSettings(base_url="http://127.0.0.1:9/gateway"))
    fake_http.reply(json_body=message())
    fake_http.reply(json_body=message())
    assert isinstance(
        hooks.llmplex_call(payload=PAYLOADS["plain"], settings=SETTINGS, client=client, timeout=3.0), dict
    )
    client.messages.create(**PAYLOADS["plain"], timeout=3.0)
    lean_sent, sdk_sent = fake_http.sent
    assert lean_sent.url == sdk_sent.url == "http://127.0.0.1:9/gateway/v1/messages"
    assert raw_headers[0] == raw_headers[1]


def test_item_3_a_cookie_the_server_set_goes_back_as_through_the_sdk(
    sync_client: anthropic.Anthropic, fake_http: FakeHTTP, raw_headers: list[list[tuple[bytes, bytes]]]
) -> None:
    fake_http.reply(json_body=message(), headers={"set-cookie": "route=a1; Path=/"})
    fake_http.reply(json_body=message())
    fake_http.reply(json_body=message())
    for _ in range(2):
        hooks.llmplex_call(payload=PAYLOADS["plain"], settings=SETTINGS, client=sync_client, timeout=3.0)
    sync_client.messages.create(**PAYLOADS["plain"], timeout=3.0)
    assert raw_headers[1] == raw_headers[2]
    assert fake_http.sent[1].headers["cookie"] == "route=a1"


@pytest.mark.parametrize(
    "payload",
    [
        {**PAYLOADS["plain"], "temperature_typo": 1},  # not a messages.create field: the SDK says so
        {**PAYLOADS["plain"], "extra_headers": {"x-trace": "1"}},
        {**PAYLOADS["plain"], "model": DEPRECATED_MODEL},  # deprecated: the SDK warns
        {**PAYLOADS["plain"], "metadata": {"when": object()}},  # not plain JSON
    ],
    ids=["unknown-key", "extra-headers", "deprecated-model", "not-json"],
)
def test_item_3_what_the_lean_path_does_not_reproduce_goes_through_the_sdk(
    sync_client: anthropic.Anthropic, payload: dict[str, Any]
) -> None:
    assert lean.sender(sync_client, payload, 5.0) is None
    assert lean.sender(anthropic.Anthropic(api_key=KEY), PAYLOADS["plain"], 5.0) is None  # not built by the plugin


def test_item_3_the_sender_never_shows_the_key(sync_client: anthropic.Anthropic) -> None:
    found = lean.sender(sync_client, PAYLOADS["plain"], 5.0)
    assert found is not None
    assert KEY not in repr(found[0])


# -- the response ---------------------------------------------------------------------------

CITY = OutputSchema(name="city", json_schema={"type": "object", "properties": {"name": {"type": "string"}}})
ANSWERS = {
    "text": message([text_block("Hello"), text_block(" there")], message_usage=usage(10, 4)),
    "tools": message(
        [text_block("Checking."), tool_use_block("get_weather", {"city": "Paris"}, "toolu_a")], stop_reason="tool_use"
    ),
    "output-tool": message([tool_use_block("city", {"name": "Paris"})], stop_reason="tool_use"),
    "cache": message(message_usage=usage(3, 5, cache_read=100, cache_creation=20)),
    "refusal": message(
        [text_block("")],
        stop_reason="refusal",
        stop_details={"type": "refusal", "category": "cyber", "explanation": "This could enable malware."},
    ),
    "refusal-no-explanation": message(
        [text_block("")],
        stop_reason="refusal",
        stop_details={"type": "refusal", "category": "cyber", "explanation": None},
    ),
    "length": message(stop_reason="max_tokens"),
}


@pytest.mark.parametrize("name", ANSWERS)
def test_item_3_lean_json_parses_to_the_same_response_as_the_sdk_model(name: str) -> None:
    request = Request(model=MODEL, messages=(Message.user("?"),), output=CITY)
    body = ANSWERS[name]
    from_json = parse_message(body, request)
    from_model = parse_message(anthropic.types.Message.model_validate(body), request)
    assert from_json.model_dump() == from_model.model_dump()
    assert from_json.refusal == from_model.refusal


# -- errors ---------------------------------------------------------------------------------


def _raised(call: Any) -> BaseException:
    with pytest.raises(anthropic.AnthropicError) as caught:
        call()
    return caught.value


def _facts(error: LLMError) -> dict[str, Any]:
    facts = {
        "type": type(error),
        "message": str(error),
        "retryable": error.retryable,
        "context": error.context,
        "cause": type(error.cause),
    }
    if isinstance(error, llmplex.LLMAPIError):
        facts |= {"status": error.status_code, "body": error.response_body, "headers": error.headers}
        facts |= {"request_id": error.request_id, "retry_after": getattr(error, "retry_after", None)}
    return facts


def _assert_same_failure(sync_client: anthropic.Anthropic, fake_http: FakeHTTP, queue: Any) -> None:
    queue()
    queue()
    lean_error = _raised(
        lambda: hooks.llmplex_call(payload=PAYLOADS["plain"], settings=SETTINGS, client=sync_client, timeout=5.0)
    )
    sdk_error = _raised(lambda: sync_client.messages.create(**PAYLOADS["plain"], timeout=5.0))
    assert type(lean_error) is type(sdk_error)
    assert str(lean_error) == str(sdk_error)
    lean_classified, sdk_classified = classify_error(lean_error), classify_error(sdk_error)
    assert lean_classified is not None and sdk_classified is not None
    assert _facts(lean_classified) == _facts(sdk_classified)
    assert KEY not in str(lean_classified)


@pytest.mark.parametrize(("status", "error_type"), sorted({(case[0], case[1]) for case in CASES}))
def test_item_3_every_error_status_fails_as_through_the_sdk(
    sync_client: anthropic.Anthropic, fake_http: FakeHTTP, status: int, error_type: str
) -> None:
    headers = {"request-id": "req_lean", "retry-after": "3", "anthropic-ratelimit-requests-remaining": "0"}
    _assert_same_failure(
        sync_client,
        fake_http,
        lambda: fake_http.reply(status, json_body=error_body(error_type, f"about {error_type}"), headers=headers),
    )


@pytest.mark.parametrize(
    "answer",
    [
        {"status": 502, "text": "<html>Bad Gateway</html>", "content_type": "text/html"},
        {"status": 500, "text": ""},
        {"status": 400, "json_body": error_body("billing_error", "Your credit balance is too low.")},
        {"status": 429, "json_body": {"unexpected": ["shape"]}, "headers": {"retry-after-ms": "1500"}},
    ],
    ids=["html-502", "empty-500", "billing-400", "odd-429"],
)
def test_item_3_odd_error_bodies_fail_as_through_the_sdk(
    sync_client: anthropic.Anthropic, fake_http: FakeHTTP, answer: dict[str, Any]
) -> None:
    _assert_same_failure(sync_client, fake_http, lambda: fake_http.reply(**answer))


@pytest.mark.parametrize(
    "failure",
    [httpx2.ConnectError("connection refused"), httpx2.ReadTimeout("timed out"), httpx2.RemoteProtocolError("cut")],
    ids=["refused", "read-timeout", "cut"],
)
def test_item_3_transport_failures_fail_as_through_the_sdk(
    sync_client: anthropic.Anthropic, fake_http: FakeHTTP, failure: Exception
) -> None:
    _assert_same_failure(sync_client, fake_http, lambda: fake_http.fail(failure))


async def test_item_3_async_errors_fail_as_through_the_sdk(fake_http: FakeHTTP) -> None:
    client = create_async_client(SETTINGS)
    for _ in range(2):
        fake_http.reply(529, json_body=error_body("overloaded_error", "Overloaded"), headers={"request-id": "r"})
    errors = []
    for send in (
        lambda: hooks.llmplex_acall(payload=PAYLOADS["plain"], settings=SETTINGS, client=client, timeout=5.0),
        lambda: client.messages.create(**PAYLOADS["plain"], timeout=5.0),
    ):
        with pytest.raises(anthropic.APIStatusError) as caught:
            await send()
        errors.append(classify_error(caught.value))
    await client.close()
    lean_error, sdk_error = errors
    assert lean_error is not None and sdk_error is not None
    assert _facts(lean_error) == _facts(sdk_error)
    assert type(lean_error) is llmplex.LLMServerError


# -- the deadline ---------------------------------------------------------------------------

T = 0.6
OVERRUN = 0.05
"""The bound past the deadline, on llmplex's own account (``tests.support.late``)."""


@pytest.fixture
def lean_sends(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The lean sends made during the test (``send`` / ``asend``)."""
    seen: list[str] = []
    real_send, real_asend = lean.LeanMessages.send, lean.LeanMessages.asend

    def send(self: lean.LeanMessages, *args: Any) -> Any:
        seen.append("send")
        return real_send(self, *args)

    async def asend(self: lean.LeanMessages, *args: Any) -> Any:
        seen.append("asend")
        return await real_asend(self, *args)

    monkeypatch.setattr(lean.LeanMessages, "send", send)
    monkeypatch.setattr(lean.LeanMessages, "asend", asend)
    return seen


@pytest.mark.parametrize("mode", ["complete", "acomplete"])
def test_item_3_a_trickling_body_ends_the_lean_call_at_its_deadline(mode: str, lean_sends: list[str]) -> None:
    with FaultServer(any_path=True) as server:
        instance = {"plugin": "anthropic", "base_url": server.url.removesuffix("/v1"), "api_key": KEY}
        client = llmplex.Client(providers={"p": instance}, throttle={"max_attempts": 1})

        def run(late: Late | None = None, **options: Any) -> object:
            if mode == "complete":
                return client.complete(f"p:{MODEL}", "hi", **options)

            async def call() -> object:
                if late is not None:
                    late.on_loop()
                return await client.acomplete(f"p:{MODEL}", "hi", **options)

            return asyncio.run(call())

        with contextlib.suppress(LLMError):  # warm-up: the server answers in OpenAI's format
            run()
        server.enqueue(Fault.trickle(0.3))
        deadline = Deadline.after(T)
        late = Late(deadline)  # the time a busy machine keeps the caller waiting for a CPU is not counted
        with pytest.raises(LLMDeadlineExceededError):
            run(late, deadline=deadline)
        seconds = late.seconds()
        client.close()
    assert seconds < OVERRUN, late.describe(seconds)
    assert lean_sends == 2 * ["send" if mode == "complete" else "asend"]


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
    list(sync_client.messages.create(**payload, stream=True, **_sdk_timeout(timeout)))
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
    lean_error = _raised(lambda: _lean_stream(sync_client, PAYLOADS["plain"]))
    sdk_error = _raised(lambda: sync_client.messages.create(**PAYLOADS["plain"], stream=True, timeout=5.0))
    assert type(lean_error) is type(sdk_error)
    assert str(lean_error) == str(sdk_error)
    lean_classified, sdk_classified = classify_error(lean_error), classify_error(sdk_error)
    assert lean_classified is not None and sdk_classified is not None
    assert _facts(lean_classified) == _facts(sdk_classified)
    assert sse_reads == []  # failed before any event was read


ERROR_EVENT = sse([("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})])


@pytest.mark.parametrize("body", [ERROR_EVENT, STREAMS["text"]().split(b"event: content_block_delta")[0] + ERROR_EVENT])
def test_item_3_lean_stream_error_event_raises_as_through_the_sdk(
    sync_client: anthropic.Anthropic, fake_http: FakeHTTP, sse_reads: list[str], body: bytes
) -> None:
    fake_http.reply_stream(body)
    fake_http.reply_stream(body)
    lean_error = _raised(lambda: list(_lean_stream(sync_client, PAYLOADS["plain"])))
    sdk_error = _raised(lambda: list(sync_client.messages.create(**PAYLOADS["plain"], stream=True, timeout=5.0)))
    assert type(lean_error) is type(sdk_error) is anthropic.APIStatusError  # status 200: the body says what failed
    assert str(lean_error) == str(sdk_error)
    lean_classified, sdk_classified = classify_error(lean_error), classify_error(sdk_error)
    assert lean_classified is not None and sdk_classified is not None
    assert _facts(lean_classified) == _facts(sdk_classified)
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
