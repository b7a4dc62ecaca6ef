"""Issue 17: the lean path (a whole answer posted through the SDK client's own HTTP client, decoded to a dict)
sends what the SDK sends and fails the way the SDK fails (async clients: tests/plugins/test_item_17_aiohttp_clients.py).

Every comparison runs the same payload through the SDK method (``client.chat.completions.create``) and through
the lean path (``transport.send_chat``), both under respx, and compares the wire.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import openai
import pytest
import respx
from llmplex_openai import transport
from llmplex_openai.clients import make_client
from llmplex_openai.errors import classify_error
from openai.resources.chat.completions.completions import Completions
from openai.resources.responses.responses import Responses

import llmplex
from llmplex import Deadline, LLMDeadlineExceededError
from tests.contract import fixtures_openai as fx
from tests.support.fault_server import Fault, FaultServer
from tests.support.late import Late

BASE = "http://127.0.0.1:8931/v1"
KEY = "sk-lean-test-0123456789abcdef"
CHAT, RESPONSES = "/chat/completions", "/responses"

TOOL = {"type": "function", "function": {"name": "weather", "parameters": {"type": "object", "properties": {}}}}
CHAT_PAYLOADS: list[dict[str, Any]] = [
    {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief. «ünïcode» ✓ 日本"},
            {"role": "user", "content": [{"type": "text", "text": "look"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "18C"},
        ],
        "tools": [TOOL],
        "tool_choice": {"type": "function", "function": {"name": "weather"}},
        "temperature": 0.25,
        "max_completion_tokens": 64,
        "stop": ["\n\n", "END"],
        "seed": 7,
    },
    {
        "model": "m",
        "messages": [{"role": "user", "content": "json please"}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "c", "schema": {"type": "object"}, "strict": True},
        },
        "top_k": 40,  # provider_options the SDK does not name: extra_body
        "cache_prompt": True,
        "max_tokens": 9,
    },
]
RESPONSES_PAYLOADS: list[dict[str, Any]] = [
    {"model": "m", "input": [{"type": "message", "role": "user", "content": "hi"}]},
    {
        "model": "m",
        "input": [
            {"type": "message", "role": "developer", "content": "Be brief ✓"},
            {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "18C"},
        ],
        "tools": [{"type": "function", "name": "weather", "parameters": {}, "strict": False}],
        "tool_choice": "required",
        "text": {"format": {"type": "json_schema", "name": "c", "schema": {"type": "object"}, "strict": True}},
        "max_output_tokens": 32,
        "previous_response_id": "resp_1",
        "reasoning": {"effort": "low"},
        "service_tier_hint": "x",  # unknown to the SDK: extra_body
    },
]


def _sdk_send(client: openai.OpenAI, path: str, payload: dict[str, Any], timeout: float | None) -> Any:
    method = Completions.create if path == CHAT else Responses.create
    kwargs = transport._kwargs(payload, transport._body_params(method), timeout)
    create = client.chat.completions.create if path == CHAT else client.responses.create
    return create(**kwargs)


def _lean_send(client: openai.OpenAI, path: str, payload: dict[str, Any], timeout: float | None) -> Any:
    return (transport.send_chat if path == CHAT else transport.send_responses)(client, payload, timeout)


def _answer(path: str) -> dict[str, Any]:
    return fx.chat_completion("ok") if path == CHAT else fx.response(fx.message_item(fx.output_text_part("ok")))


@pytest.fixture
def wire() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as router:
        yield router


def _client(**options: Any) -> openai.OpenAI:
    return make_client(BASE + "?key=q1", KEY, organization="org-1", project="proj-1", **options)


def _capture(router: respx.MockRouter, path: str, reply: httpx.Response) -> list[httpx.Request]:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return reply

    router.post(BASE + path).mock(side_effect=answer)
    return seen


CASES = [(CHAT, p) for p in CHAT_PAYLOADS] + [(RESPONSES, p) for p in RESPONSES_PAYLOADS]


@pytest.mark.parametrize(("path", "payload"), CASES)
@pytest.mark.parametrize("timeout", [None, 12.5])
def test_item_17_lean_path_sends_the_sdk_bytes_url_and_headers(
    wire: respx.MockRouter, path: str, payload: dict[str, Any], timeout: float | None
) -> None:
    seen = _capture(wire, path, httpx.Response(200, json=_answer(path)))
    client = _client()
    _sdk_send(client, path, payload, timeout)
    answer = _lean_send(client, path, payload, timeout)
    sdk, lean = seen
    assert lean.content == sdk.content  # byte for byte: same key order, separators, non-ASCII as UTF-8
    assert lean.url == sdk.url and str(lean.url).endswith("?key=q1")
    assert lean.method == sdk.method == "POST"
    assert lean.headers.multi_items() == sdk.headers.multi_items()
    assert lean.headers["openai-organization"] == "org-1" and lean.headers["authorization"] == f"Bearer {KEY}"
    assert lean.extensions["timeout"] == sdk.extensions["timeout"]
    assert answer == _answer(path)  # the decoded JSON, untouched


def test_item_17_lean_path_keeps_the_clients_default_headers_and_timeout(wire: respx.MockRouter) -> None:
    seen = _capture(wire, CHAT, httpx.Response(200, json=_answer(CHAT)))
    client = _client(timeout=33.0).with_options(default_headers={"X-Team": "blue"})
    _sdk_send(client, CHAT, CHAT_PAYLOADS[0], None)
    _lean_send(client, CHAT, CHAT_PAYLOADS[0], None)
    sdk, lean = seen
    assert lean.headers.multi_items() == sdk.headers.multi_items()
    assert lean.headers["x-team"] == "blue" and lean.headers["x-stainless-read-timeout"] == "33.0"


# -- errors: same SDK exception, same classification -------------------------------------------------------------

_ERROR = {"error": {"message": "nope", "type": "invalid_request_error", "code": "bad_thing", "param": None}}
_STATUS_CASES: list[tuple[int, dict[str, str], Any]] = [
    (400, {}, _ERROR),
    (400, {}, {"error": {"message": "too long", "type": "invalid_request_error", "code": "context_length_exceeded"}}),
    (401, {}, {"error": {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}}),
    (403, {}, _ERROR),
    (404, {}, _ERROR),
    (408, {}, _ERROR),
    (409, {"x-should-retry": "true"}, _ERROR),
    (413, {}, _ERROR),
    (422, {}, _ERROR),
    (429, {"retry-after": "7"}, {"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}}),
    (
        429,
        {"retry-after-ms": "1500"},
        {"error": {"message": "no money", "type": "insufficient_quota", "code": "insufficient_quota"}},
    ),
    (429, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, _ERROR),
    (500, {"x-request-id": "req_9"}, {"error": {"message": "boom", "type": "server_error", "code": None}}),
    (502, {"content-type": "text/html"}, "<html><body>Bad gateway</body></html>"),
    (503, {"retry-after": "2"}, _ERROR),
    (529, {}, {"error": {"message": "overloaded", "type": "overloaded_error"}}),
]


def _reply(status: int, headers: dict[str, str], body: Any) -> httpx.Response:
    if isinstance(body, str):
        return httpx.Response(status, headers=headers, text=body)
    return httpx.Response(status, headers=headers, json=body)


def _failure(send: Callable[[], Any]) -> BaseException:
    with pytest.raises(openai.OpenAIError) as caught:
        send()
    return caught.value


def _summary(error: BaseException) -> tuple[Any, ...]:
    classified = classify_error(error)
    assert classified is not None
    return (
        type(error),
        type(classified),
        str(classified),
        classified.status_code,
        getattr(classified, "retry_after", None),
        classified.retryable,
        classified.request_id,
        classified.response_body,
        classified.context,
    )


@pytest.mark.parametrize(
    ("path", "status", "headers", "body"), [(p, *c) for p in (CHAT, RESPONSES) for c in _STATUS_CASES]
)
def test_item_17_lean_path_errors_are_the_sdks_errors(
    wire: respx.MockRouter, path: str, status: int, headers: dict[str, str], body: Any
) -> None:
    wire.post(BASE + path).mock(side_effect=lambda _: _reply(status, headers, body))
    client = _client()
    payload = CHAT_PAYLOADS[0] if path == CHAT else RESPONSES_PAYLOADS[0]
    sdk = _failure(lambda: _sdk_send(client, path, payload, None))
    lean = _failure(lambda: _lean_send(client, path, payload, None))
    assert _summary(lean) == _summary(sdk)
    assert isinstance(lean, openai.APIStatusError) and lean.status_code == status


@pytest.mark.parametrize(
    "failure",
    [
        httpx.ConnectTimeout("slow"),
        httpx.ReadTimeout("slow"),
        httpx.ConnectError("refused"),
        httpx.RemoteProtocolError("cut"),
    ],
)
def test_item_17_lean_path_transport_failures_are_the_sdks(wire: respx.MockRouter, failure: Exception) -> None:
    wire.post(BASE + CHAT).mock(side_effect=failure)
    client = _client()
    sdk = _failure(lambda: _sdk_send(client, CHAT, CHAT_PAYLOADS[0], None))
    lean = _failure(lambda: _lean_send(client, CHAT, CHAT_PAYLOADS[0], None))
    assert type(lean) is type(sdk) and lean.__cause__ is failure
    assert type(classify_error(lean)) is type(classify_error(sdk))


def test_item_17_lean_path_reads_answers_like_the_sdk(wire: respx.MockRouter) -> None:
    """JSON under any content type is decoded; a non-JSON body is its text; malformed JSON fails as in the SDK."""
    client = _client()
    wire.post(BASE + CHAT).mock(
        side_effect=[
            httpx.Response(200, text='{"id": "x", "choices": []}', headers={"content-type": "text/plain"}),
            httpx.Response(200, text="<html>proxy page</html>", headers={"content-type": "text/html"}),
            httpx.Response(200, text='{"id": "x", "cho', headers={"content-type": "application/json"}),
        ]
    )
    assert _lean_send(client, CHAT, CHAT_PAYLOADS[0], None) == {"id": "x", "choices": []}
    assert _lean_send(client, CHAT, CHAT_PAYLOADS[0], None) == "<html>proxy page</html>"
    with pytest.raises(json.JSONDecodeError) as caught:
        _lean_send(client, CHAT, CHAT_PAYLOADS[0], None)
    assert type(classify_error(caught.value)) is llmplex.LLMServerError


def test_item_17_response_raw_is_the_decoded_answer(wire: respx.MockRouter) -> None:
    wire.post(BASE + CHAT).mock(return_value=httpx.Response(200, json=fx.chat_completion("Bonjour")))
    llm = llmplex.Client(providers={"p": {"plugin": "openai", "base_url": BASE, "api": "chat"}})
    response = llm.complete("p:m", "hi")
    assert response.text == "Bonjour" and response.raw == fx.chat_completion("Bonjour")


# -- the deadline holds on the lean path ----------------------------------------------------------------------------

T, OVERRUN = 0.6, 0.05


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("mode", ["complete", "acomplete"])
def test_item_17_lean_path_ends_a_trickling_answer_at_the_deadline(api: str, mode: str) -> None:
    with FaultServer(any_path=True) as server:
        llm = llmplex.Client(providers={"p": {"plugin": "openai", "base_url": server.url, "api": api, "api_key": KEY}})

        def run(late: Late | None = None, **kwargs: Any) -> Any:
            if mode == "complete":
                return llm.complete("p:m", "hi", throttle={"max_attempts": 1}, **kwargs)

            async def answer() -> Any:
                if late is not None:
                    late.on_loop()
                return await llm.acomplete("p:m", "hi", throttle={"max_attempts": 1}, **kwargs)

            return asyncio.run(answer())

        server.enqueue(Fault.ok("warm"))
        run()
        server.enqueue(Fault.trickle(0.3))
        deadline = Deadline.after(T)
        late = Late(deadline)  # the time a busy machine keeps the caller from running is not llmplex's
        with pytest.raises(LLMDeadlineExceededError):
            run(late, deadline=deadline)
        seconds = late.seconds()
        assert seconds < OVERRUN, late.describe(seconds)


# -- many requests in flight ---------------------------------------------------------------------------------------


def test_item_17_sixty_four_requests_in_flight_through_the_async_client() -> None:
    """A real local server, 64 concurrent calls through llmplex (the aiohttp transport): all answered."""

    async def run(server: FaultServer) -> list[str]:
        llm = llmplex.Client(
            providers={"p": {"plugin": "openai", "base_url": server.url, "api": "chat", "api_key": KEY}}
        )
        async with llm:
            answers = await asyncio.gather(*(llm.acomplete("p:m", f"q{i}") for i in range(64)))
        return [a.text for a in answers]

    with FaultServer(default=Fault.ok("hi")) as server:
        assert asyncio.run(run(server)) == ["hi"] * 64
        assert server.request_count == 64


def test_item_17_lean_path_sends_cookies_a_server_set_like_the_sdk(wire: respx.MockRouter) -> None:
    answer = _answer(CHAT)
    seen = _capture(wire, CHAT, httpx.Response(200, json=answer, headers={"set-cookie": "route=b7; Path=/"}))
    client = _client()
    _lean_send(client, CHAT, CHAT_PAYLOADS[0], None)  # the server sets its cookie
    _sdk_send(client, CHAT, CHAT_PAYLOADS[0], None)
    _lean_send(client, CHAT, CHAT_PAYLOADS[0], None)
    _, sdk, lean = seen
    assert lean.headers["cookie"] == "route=b7"
    assert lean.headers.multi_items() == sdk.headers.multi_items() and lean.content == sdk.content


def test_item_17_lean_path_keeps_the_sdks_request_extensions() -> None:
    """A host name with ``_`` (a docker service) gets the SNI name the SDK sets."""
    seen: list[httpx.Request] = []
    with respx.mock(assert_all_called=False) as router:
        router.post("http://llm_gateway:8000/v1/chat/completions").mock(
            side_effect=lambda request: seen.append(request) or httpx.Response(200, json=_answer(CHAT))
        )
        client = make_client("http://llm_gateway:8000/v1", KEY)
        _sdk_send(client, CHAT, CHAT_PAYLOADS[0], None)
        _lean_send(client, CHAT, CHAT_PAYLOADS[0], None)
    sdk, lean = seen
    assert lean.extensions == sdk.extensions and lean.extensions["sni_hostname"] == "llm-gateway"


def test_item_17_lean_path_keeps_the_sdks_request_extensions_once_a_cookie_is_set() -> None:
    """With a cookie to send, httpx builds the request (it adds the cookie); the SDK's extensions still go with it
    (the SNI name here; openai 3.x's Azure client names the origin its key is for the same way)."""
    seen: list[httpx.Request] = []
    with respx.mock(assert_all_called=False) as router:
        router.post("http://llm_gateway:8000/v1/chat/completions").mock(
            side_effect=lambda request: (
                seen.append(request)
                or httpx.Response(200, json=_answer(CHAT), headers={"set-cookie": "route=b7; Path=/"})
            )
        )
        client = make_client("http://llm_gateway:8000/v1", KEY)
        _sdk_send(client, CHAT, CHAT_PAYLOADS[0], None)  # the server sets its cookie
        _sdk_send(client, CHAT, CHAT_PAYLOADS[0], None)
        _lean_send(client, CHAT, CHAT_PAYLOADS[0], None)
    _, sdk, lean = seen
    assert lean.headers["cookie"] == "route=b7"
    assert lean.extensions == sdk.extensions and lean.extensions["sni_hostname"] == "llm-gateway"
