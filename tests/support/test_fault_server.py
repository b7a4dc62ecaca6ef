"""How the official ``openai`` SDK (max_retries=0) reacts to each fault of the fault server.

Later reliability tests rely on this table; every row is asserted below for both
``chat.completions.create`` and ``responses.create``, streaming and not, and every
fault costs exactly one HTTP request (the SDK never retried).

| fault (``Fault.``...)            | SDK raises                                   | status |
|----------------------------------|----------------------------------------------|--------|
| rate_limit(retry_after=2)        | openai.RateLimitError, code rate_limit_exceeded | 429 |
| rate_limit(retry_after_ms=150)   | openai.RateLimitError (header on .response)  | 429    |
| quota()                          | openai.RateLimitError, code insufficient_quota | 429  |
| server_error(500/502/503/529)    | openai.InternalServerError                   | 5xx    |
| json(400, context_length_...())  | openai.BadRequestError, code context_length_exceeded | 400 |
| hang(seconds > timeout)          | openai.APITimeoutError (cause httpx.ReadTimeout) | -  |
| reset()                          | openai.APIConnectionError (cause httpx.ReadError) | - |
| truncated() / stream_cut(n), non-streaming | openai.APIConnectionError (cause httpx.RemoteProtocolError) | - |
| stream_cut(n), streaming         | httpx.RemoteProtocolError, raw, mid-iteration | 200   |
| stream_stall(n), non-streaming   | openai.APITimeoutError (cause httpx.ReadTimeout) | -  |
| stream_stall(n), streaming       | httpx.ReadTimeout, raw, mid-iteration        | 200    |
| malformed_json()                 | json.JSONDecodeError, raw (also mid-stream)  | 200    |
| unexpected_shape(), non-streaming | none: ChatCompletion/Response of the odd body | 200  |
| unexpected_shape(), streaming    | none: the stream yields nothing              | 200    |

"raw" = not wrapped in an ``openai`` exception: the SDK wraps transport errors
only until the response headers arrive; a stream that breaks later, and a body
that is not JSON, surface as httpx / json exceptions. A Retry-After value is on
``error.response.headers``; the SDK itself does not parse it when retries are off.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from tests.contract import fixtures_openai as fx
from tests.contract.openapi import validate_openai
from tests.support.fault_server import Fault, FaultServer
from tests.support.faults import UNEXPECTED_SHAPE

TIMEOUT = 0.3  # client timeout for hang and stall faults; they last longer on the server
MESSAGES: list[Any] = [{"role": "user", "content": "hi"}]

Call = Callable[[OpenAI, bool], object]


def chat(client: OpenAI, stream: bool) -> object:
    """One chat completion; a stream is consumed and returned as a list of chunks."""
    if stream:
        chunks = client.chat.completions.create(
            model="gpt-4o-mini", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
        return list(chunks)
    return client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)


def responses(client: OpenAI, stream: bool) -> object:
    """One Responses API call; a stream is consumed and returned as a list of events."""
    if stream:
        return list(client.responses.create(model="gpt-4o-mini", input="hi", stream=True))
    return client.responses.create(model="gpt-4o-mini", input="hi")


CALLS = [
    pytest.param(chat, False, id="chat"),
    pytest.param(chat, True, id="chat-stream"),
    pytest.param(responses, False, id="responses"),
    pytest.param(responses, True, id="responses-stream"),
]


@pytest.fixture
def sdk(fault_server: FaultServer) -> Iterator[OpenAI]:
    """The official client against the fault server, with the SDK's own retries off.

    Plain-HTTP ``verify=False`` only skips loading CA certificates (60 ms per client).
    """
    http = httpx.Client(verify=False)
    with OpenAI(base_url=fault_server.url, api_key="test", max_retries=0, timeout=10, http_client=http) as client:
        yield client


@pytest.fixture
def impatient_sdk(sdk: OpenAI) -> OpenAI:
    """The same client with a short timeout, for faults that never answer."""
    return sdk.with_options(timeout=TIMEOUT)


# --- success ---------------------------------------------------------------------------


def test_chat_success_carries_usage(fault_server: FaultServer, sdk: OpenAI) -> None:
    fault_server.enqueue(Fault.ok("Bonjour", fx.TokenUsage(120, 30, cached_tokens=100, reasoning_tokens=12)))
    completion = sdk.chat.completions.create(model="gpt-4o", messages=MESSAGES)
    assert completion.choices[0].message.content == "Bonjour"
    assert completion.model == "gpt-4o"
    usage = completion.usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (120, 30, 150)
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 100
    assert usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens == 12


def test_chat_stream_is_sse_with_done_and_usage_chunk(fault_server: FaultServer) -> None:
    fault_server.enqueue(Fault.ok("one two three", fx.TokenUsage(5, 3)))
    body = {"model": "m", "messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}}
    reply = httpx.post(f"{fault_server.url}/chat/completions", json=body)
    assert reply.headers["content-type"].startswith("text/event-stream")
    frames = reply.text.split("\n\n")
    assert frames[-2:] == ["data: [DONE]", ""]
    chunks = [json.loads(frame.removeprefix("data: ")) for frame in frames[:-2]]
    for chunk in chunks:
        validate_openai("CreateChatCompletionStreamResponse", chunk)
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]) == "one two three"
    assert chunks[-1]["usage"]["total_tokens"] == 8


def test_chat_stream_without_include_usage_has_no_usage(fault_server: FaultServer, sdk: OpenAI) -> None:
    chunks = list(sdk.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    assert all(chunk.usage is None for chunk in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_responses_success_and_stream(fault_server: FaultServer, sdk: OpenAI) -> None:
    fault_server.enqueue(Fault.ok("Hi there", fx.TokenUsage(9, 4, cached_tokens=8, reasoning_tokens=2)))
    response = sdk.responses.create(model="gpt-4o", input="hi")
    assert response.output_text == "Hi there"
    assert response.usage is not None
    assert response.usage.input_tokens_details.cached_tokens == 8
    assert response.usage.output_tokens_details.reasoning_tokens == 2
    events = list(sdk.responses.create(model="gpt-4o", input="hi", stream=True))
    assert events[0].type == "response.created"
    assert events[-1].type == "response.completed"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Hello! How can I help?"


def test_requests_are_recorded(fault_server: FaultServer, sdk: OpenAI) -> None:
    sdk.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, temperature=0.5)
    (request,) = fault_server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.body == {"model": "gpt-4o-mini", "messages": MESSAGES, "temperature": 0.5}
    assert request.headers["authorization"] == "Bearer test"
    assert request.headers["x-stainless-retry-count"] == "0"
    assert request.fault == Fault.ok()


# --- error statuses ----------------------------------------------------------------------

STATUS_FAULTS = [
    pytest.param(Fault.rate_limit(retry_after=2), openai.RateLimitError, 429, "rate_limit_exceeded", id="429"),
    pytest.param(Fault.quota(), openai.RateLimitError, 429, "insufficient_quota", id="quota"),
    pytest.param(Fault.server_error(500), openai.InternalServerError, 500, None, id="500"),
    pytest.param(Fault.server_error(502), openai.InternalServerError, 502, None, id="502"),
    pytest.param(Fault.server_error(503), openai.InternalServerError, 503, None, id="503"),
    pytest.param(Fault.server_error(529), openai.InternalServerError, 529, None, id="529"),
    pytest.param(
        Fault.json(400, fx.context_length_exceeded_error()),
        openai.BadRequestError,
        400,
        "context_length_exceeded",
        id="400-context",
    ),
]


@pytest.mark.parametrize(("fault", "error", "status", "code"), STATUS_FAULTS)
@pytest.mark.parametrize(("call", "stream"), CALLS)
def test_status_faults(
    fault_server: FaultServer,
    sdk: OpenAI,
    call: Call,
    stream: bool,
    fault: Fault,
    error: type[openai.APIStatusError],
    status: int,
    code: str | None,
) -> None:
    fault_server.enqueue(fault)
    with pytest.raises(error) as caught:
        call(sdk, stream)
    assert caught.value.status_code == status
    assert caught.value.code == code
    validate_openai("ErrorResponse", caught.value.response.json())
    assert fault_server.request_count == 1


def test_retry_after_headers_reach_the_sdk_error(fault_server: FaultServer, sdk: OpenAI) -> None:
    fault_server.enqueue(Fault.rate_limit(retry_after=2), Fault.rate_limit(retry_after_ms=150))
    for header, value in (("retry-after", "2"), ("retry-after-ms", "150")):
        with pytest.raises(openai.RateLimitError) as caught:
            chat(sdk, False)
        assert caught.value.response.headers[header] == value
    assert fault_server.request_count == 2


# --- transport faults --------------------------------------------------------------------


@pytest.mark.parametrize(("call", "stream"), CALLS)
def test_hang_times_out(fault_server: FaultServer, impatient_sdk: OpenAI, call: Call, stream: bool) -> None:
    fault_server.enqueue(Fault.hang(seconds=10))
    with pytest.raises(openai.APITimeoutError) as caught:
        call(impatient_sdk, stream)
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)
    # The client may give up before a loaded server's handler thread has read the request.
    assert fault_server.wait_for_requests(1, timeout=10)
    assert fault_server.request_count == 1


@pytest.mark.parametrize(("call", "stream"), CALLS)
def test_reset_is_a_connection_error(fault_server: FaultServer, sdk: OpenAI, call: Call, stream: bool) -> None:
    fault_server.enqueue(Fault.reset())
    with pytest.raises(openai.APIConnectionError) as caught:
        call(sdk, stream)
    assert type(caught.value) is openai.APIConnectionError
    assert isinstance(caught.value.__cause__, httpx.ReadError)
    assert fault_server.request_count == 1


@pytest.mark.parametrize(("call", "stream"), CALLS)
def test_malformed_json_escapes_unwrapped(fault_server: FaultServer, sdk: OpenAI, call: Call, stream: bool) -> None:
    fault_server.enqueue(Fault.malformed_json())
    with pytest.raises(json.JSONDecodeError):
        call(sdk, stream)
    assert fault_server.request_count == 1


@pytest.mark.parametrize("call", [chat, responses])
def test_truncated_body_is_a_connection_error(fault_server: FaultServer, sdk: OpenAI, call: Call) -> None:
    fault_server.enqueue(Fault.truncated())
    with pytest.raises(openai.APIConnectionError) as caught:
        call(sdk, False)
    assert isinstance(caught.value.__cause__, httpx.RemoteProtocolError)
    assert fault_server.request_count == 1


def test_unexpected_shape_is_not_an_error(fault_server: FaultServer, sdk: OpenAI) -> None:
    fault_server.enqueue(Fault.unexpected_shape(), Fault.unexpected_shape(), Fault.unexpected_shape())
    assert sdk.chat.completions.create(model="m", messages=MESSAGES).to_dict() == UNEXPECTED_SHAPE
    assert sdk.responses.create(model="m", input="hi").to_dict() == UNEXPECTED_SHAPE
    assert list(sdk.chat.completions.create(model="m", messages=MESSAGES, stream=True)) == []
    assert fault_server.request_count == 3


@pytest.mark.parametrize(("call", "stream"), CALLS)
def test_stream_cut(fault_server: FaultServer, sdk: OpenAI, call: Call, stream: bool) -> None:
    fault_server.enqueue(Fault.stream_cut(after_events=2))
    if stream:
        received = _consume_until_error(sdk, call, httpx.RemoteProtocolError)
        assert received == 2
    else:
        with pytest.raises(openai.APIConnectionError):
            call(sdk, stream)
    assert fault_server.request_count == 1


@pytest.mark.parametrize(("call", "stream"), CALLS)
def test_stream_stall(fault_server: FaultServer, impatient_sdk: OpenAI, call: Call, stream: bool) -> None:
    fault_server.enqueue(Fault.stream_stall(after_events=2, seconds=10))
    if stream:
        received = _consume_until_error(impatient_sdk, call, httpx.ReadTimeout)
        assert received == 2
    else:
        with pytest.raises(openai.APITimeoutError):
            call(impatient_sdk, stream)
    assert fault_server.request_count == 1


def _consume_until_error(sdk: OpenAI, call: Call, error: type[Exception]) -> int:
    """Iterate a stream, counting events until ``error`` (raw, not wrapped by the SDK) is raised."""
    if call is chat:
        stream: Any = sdk.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    else:
        stream = sdk.responses.create(model="m", input="hi", stream=True)
    received: list[object] = []
    with pytest.raises(error):
        received.extend(stream)
    return len(received)


# --- the script --------------------------------------------------------------------------


def test_queue_is_consumed_in_order_then_default(fault_server: FaultServer, sdk: OpenAI) -> None:
    fault_server.default = Fault.ok("default")
    fault_server.enqueue(Fault.server_error(503), Fault.ok("first"))
    with pytest.raises(openai.InternalServerError):
        chat(sdk, False)
    assert fault_server.pending == 1
    texts = [sdk.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content for _ in range(2)]
    assert texts == ["first", "default"]
    assert [r.fault for r in fault_server.requests] == [Fault.server_error(503), Fault.ok("first"), Fault.ok("default")]


def test_unknown_path_is_404_and_keeps_the_queue(fault_server: FaultServer) -> None:
    fault_server.enqueue(Fault.quota())
    reply = httpx.post(f"{fault_server.url}/embeddings", json={"input": "x"})
    assert reply.status_code == 404
    validate_openai("ErrorResponse", reply.json())
    assert fault_server.pending == 1
    assert fault_server.request_count == 1


def test_deleting_a_stored_response_succeeds_and_keeps_the_queue(fault_server: FaultServer, sdk: OpenAI) -> None:
    fault_server.enqueue(Fault.quota())
    sdk.responses.delete("resp_123")  # raises unless the server answers 2xx
    assert httpx.delete(f"{fault_server.url}/responses").status_code == 404
    assert [(r.method, r.path) for r in fault_server.requests] == [
        ("DELETE", "/v1/responses/resp_123"),
        ("DELETE", "/v1/responses"),
    ]
    assert fault_server.pending == 1


def _statuses(server: FaultServer, count: int) -> list[int]:
    with httpx.Client(base_url=server.url) as client:
        return [client.post("/chat/completions", json={"model": "m"}).status_code for _ in range(count)]


def test_random_mode_is_seeded_and_fails_about_p() -> None:
    faults = [Fault.server_error(500), Fault.rate_limit(retry_after=1)]
    runs = []
    for _ in range(2):
        with FaultServer(failure_rate=0.3, random_faults=faults, seed=42) as server:
            runs.append(_statuses(server, 200))
    assert runs[0] == runs[1]
    assert set(runs[0]) == {200, 429, 500}
    assert 40 <= sum(status != 200 for status in runs[0]) <= 80


def test_random_mode_is_thread_safe(fault_server: FaultServer) -> None:
    fault_server.set_random(0.5, [Fault.server_error(502)], seed=1)
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.extend(_statuses(fault_server, 25))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == fault_server.request_count == 200
    assert 60 <= results.count(502) <= 140
    assert set(results) == {200, 502}


def test_set_random_rejects_nonsense(fault_server: FaultServer) -> None:
    with pytest.raises(ValueError, match="failure_rate"):
        fault_server.set_random(1.5, [Fault.quota()])
    with pytest.raises(ValueError, match="failure_rate"):
        fault_server.set_random(0.5, [])


def test_reset_forgets_queue_and_records(fault_server: FaultServer, sdk: OpenAI) -> None:
    chat(sdk, False)
    fault_server.enqueue(Fault.quota())
    fault_server.reset()
    assert (fault_server.pending, fault_server.request_count) == (0, 0)


# --- bounded -----------------------------------------------------------------------------


def test_stop_is_prompt_during_a_hang_and_with_idle_connections() -> None:
    server = FaultServer(Fault.hang(seconds=60)).start()
    idle = socket.create_connection(server.address)
    hanging = threading.Thread(target=_post_quietly, args=(server.url,))
    hanging.start()
    while server.request_count == 0:
        time.sleep(0.01)
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 10  # not the hang's 60 s
    hanging.join(timeout=2)
    assert not hanging.is_alive()
    idle.close()
    server.stop()  # idempotent


def _post_quietly(url: str) -> None:
    with contextlib.suppress(httpx.HTTPError):
        httpx.post(f"{url}/chat/completions", json={"model": "m"}, timeout=30)


def test_lifetime_stops_a_forgotten_server() -> None:
    server = FaultServer(lifetime=0.05).start()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            socket.create_connection(server.address, timeout=0.5).close()
        except ConnectionRefusedError:
            return
        except ConnectionResetError:
            pass  # caught in the listener's closing; the next connect is refused
        time.sleep(0.02)
    pytest.fail("the server still accepts connections after its lifetime")
