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
from typing import Any

import anthropic
import httpx2
import pytest
from llmplex_anthropic import hooks, lean
from llmplex_anthropic.clients import create_async_client, create_client
from llmplex_anthropic.errors import classify_error
from llmplex_anthropic.response import parse_message
from llmplex_anthropic.settings import AnthropicSettings

import llmplex
from llmplex import Deadline, LLMDeadlineExceededError, LLMError
from llmplex.types import Message, OutputSchema, Request
from tests.plugins.anthropic.fake_http import FakeHTTP, fake_http
from tests.plugins.anthropic.lean_cases import (
    DEPRECATED_MODEL,
    KEY,
    PAYLOADS,
    SETTINGS,
    facts,
    raised,
    raw_headers,
    sdk_timeout,
    sync_client,
)
from tests.plugins.anthropic.test_anthropic_errors import CASES
from tests.plugins.anthropic.wire import MODEL, error_body, message, text_block, tool_use_block, usage
from tests.support.fault_server import Fault, FaultServer
from tests.support.late import Late

__all__ = ["fake_http", "raw_headers", "sync_client"]

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
    sync_client.messages.create(**payload, **sdk_timeout(timeout))
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


def _assert_same_failure(sync_client: anthropic.Anthropic, fake_http: FakeHTTP, queue: Any) -> None:
    queue()
    queue()
    lean_error = raised(
        lambda: hooks.llmplex_call(payload=PAYLOADS["plain"], settings=SETTINGS, client=sync_client, timeout=5.0)
    )
    sdk_error = raised(lambda: sync_client.messages.create(**PAYLOADS["plain"], timeout=5.0))
    assert type(lean_error) is type(sdk_error)
    assert str(lean_error) == str(sdk_error)
    lean_classified, sdk_classified = classify_error(lean_error), classify_error(sdk_error)
    assert lean_classified is not None and sdk_classified is not None
    assert facts(lean_classified) == facts(sdk_classified)
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
    assert facts(lean_error) == facts(sdk_error)
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
