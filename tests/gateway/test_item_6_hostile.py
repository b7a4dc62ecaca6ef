"""Issue 22 item 6: hostile input gets the API's own error shape (never a 500), and the gateway keeps serving."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.gateway.harness import MASTER_KEY, Gateway, gateway_config, running_gateway

CHAT = "/v1/chat/completions"
MESSAGES = "/v1/messages"
HELLO = {"model": "mock:echo", "messages": [{"role": "user", "content": "hello"}]}
CLAUDE = {"model": "mock:echo", "max_tokens": 10, "messages": [{"role": "user", "content": "hello"}]}
AUTH = {"authorization": f"Bearer {MASTER_KEY}"}


@pytest.fixture(scope="module")
def shared_gateway() -> Iterator[Gateway]:
    """One gateway for the module (its tests only read it): hostile input must not change it anyway."""
    with running_gateway(gateway_config()) as running:
        yield running


@pytest.fixture
def gateway(shared_gateway: Gateway) -> Gateway:
    """The module's gateway, with the mock's script and record and the request records emptied."""
    shared_gateway.mock.reset()
    shared_gateway.recorder.records.clear()
    return shared_gateway


@pytest.fixture
def http(gateway: Gateway) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=gateway.url, headers=AUTH, timeout=10) as client:
        yield client


def _still_serving(gateway: Gateway) -> None:
    reply = httpx.post(gateway.url + CHAT, json=HELLO, headers=AUTH, timeout=10)
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "hello"
    assert not [r for r in gateway.recorder.records if r.status >= 500], gateway.recorder.records


def _openai_error(reply: httpx.Response, status: int = 400) -> dict[str, object]:
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    return dict(error)


def _anthropic_error(reply: httpx.Response, status: int = 400) -> dict[str, object]:
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert body["type"] == "error" and set(body["error"]) == {"type", "message"}
    return dict(body["error"])


DEEP = b'{"model": "mock:echo", "messages": ' + b"[" * 10000 + b"]" * 10000 + b"}"
BAD_BODIES = {
    "not-json": b"this is not json",
    "binary": b"\xff\xfe\x00\x01garbage",
    "empty": b"",
    "array": b"[1, 2, 3]",
    "string": b'"hello"',
    "null": b"null",
    "truncated": b'{"model": "mock:echo", "messages": [',
    "deep-nesting": DEEP,
    "deep-objects": b'{"model": "mock:echo", "x": ' + b'{"a":' * 10000 + b"1" + b"}" * 10000 + b"}",
    "invalid-utf8-in-string": b'{"model": "mock:echo", "messages": [{"role": "user", "content": "\xc3\x28"}]}',
    "lone-surrogate": b'{"model": "mock:echo", "messages": [{"role": "user", "content": "\\ud800"}]}',
}


@pytest.mark.parametrize("body", list(BAD_BODIES.values()), ids=list(BAD_BODIES))
def test_item_6_bodies_that_are_not_requests_get_400_in_each_shape(
    gateway: Gateway, http: httpx.Client, body: bytes
) -> None:
    _openai_error(http.post(CHAT, content=body, headers={"content-type": "application/json"}))
    _openai_error(http.post("/v1/responses", content=body))
    _openai_error(http.post("/v1/embeddings", content=body))
    assert _anthropic_error(http.post(MESSAGES, content=body))["type"] == "invalid_request_error"
    _still_serving(gateway)


WRONG_TYPES = {
    "model-number": {**HELLO, "model": 5},
    "model-empty": {**HELLO, "model": ""},
    "messages-object": {**HELLO, "messages": {"role": "user"}},
    "messages-empty": {**HELLO, "messages": []},
    "role-unknown": {**HELLO, "messages": [{"role": "wizard", "content": "x"}]},
    "content-number": {**HELLO, "messages": [{"role": "user", "content": 7}]},
    "part-unknown": {**HELLO, "messages": [{"role": "user", "content": [{"type": "hologram"}]}]},
    "stream-string": {**HELLO, "stream": "yes"},
    "temperature-string": {**HELLO, "temperature": "hot"},
    "temperature-huge": {**HELLO, "temperature": 1e308},
    "max-tokens-negative": {**HELLO, "max_tokens": -1},
    "max-tokens-huge": {**HELLO, "max_tokens": 10**30},
    "n-two": {**HELLO, "n": 2},
    "tools-string": {**HELLO, "tools": "all of them"},
    "tool-choice-number": {**HELLO, "tool_choice": 3},
    "image-not-base64": {
        **HELLO,
        "messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@"}}]}
        ],
    },
    "image-bad-scheme": {
        **HELLO,
        "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}]}],
    },
    "tool-message-without-id": {**HELLO, "messages": [{"role": "tool", "content": "x"}]},
}


@pytest.mark.parametrize("body", list(WRONG_TYPES.values()), ids=list(WRONG_TYPES))
def test_item_6_wrong_types_get_openais_400_naming_the_field(
    gateway: Gateway, http: httpx.Client, body: object
) -> None:
    error = _openai_error(http.post(CHAT, json=body))
    assert error["type"] == "invalid_request_error"
    assert gateway.mock.calls == []  # nothing was sent
    _still_serving(gateway)


CLAUDE_WRONG = {
    "max-tokens-missing": {"model": "mock:echo", "messages": CLAUDE["messages"]},
    "system-number": {**CLAUDE, "system": 12},
    "block-unknown": {**CLAUDE, "messages": [{"role": "user", "content": [{"type": "telepathy"}]}]},
    "tool-without-schema": {**CLAUDE, "tools": [{"name": "x"}]},
    "tool-use-from-user": {
        **CLAUDE,
        "messages": [{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}]}],
    },
    "image-bad-base64": {
        **CLAUDE,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "!!"}}],
            }
        ],
    },
    "temperature-above-one": {**CLAUDE, "temperature": 1.5},
}


@pytest.mark.parametrize("body", list(CLAUDE_WRONG.values()), ids=list(CLAUDE_WRONG))
def test_item_6_wrong_messages_get_anthropics_400(gateway: Gateway, http: httpx.Client, body: object) -> None:
    assert _anthropic_error(http.post(MESSAGES, json=body))["type"] == "invalid_request_error"
    assert gateway.mock.calls == []
    _still_serving(gateway)


ODD_KEYS = {
    "api-key-header": {"api-key": MASTER_KEY},
    "basic-auth": {"authorization": "Basic " + MASTER_KEY},
    "bearer-without-key": {"authorization": "Bearer"},
    "key-with-suffix": {"authorization": f"Bearer {MASTER_KEY}x"},
    "key-prefix-only": {"x-api-key": MASTER_KEY[:-1]},
    "cookie": {"cookie": f"api_key={MASTER_KEY}"},
    "huge-key": {"authorization": "Bearer " + "k" * 60000},
}


@pytest.mark.parametrize("headers", list(ODD_KEYS.values()), ids=list(ODD_KEYS))
def test_item_6_keys_in_odd_places_are_refused_without_echoing_them(gateway: Gateway, headers: dict[str, str]) -> None:
    with httpx.Client(base_url=gateway.url, timeout=10) as bare:
        openai_reply = bare.post(CHAT + f"?api_key={MASTER_KEY}", json=HELLO, headers=headers)
        claude_reply = bare.post(MESSAGES, json=CLAUDE, headers=headers)
    for reply in (openai_reply, claude_reply):
        assert reply.status_code in (401, 431), reply.text
        assert MASTER_KEY[:12] not in reply.text and "k" * 100 not in reply.text
    if openai_reply.status_code == 401:
        assert _openai_error(openai_reply, 401)["code"] == "invalid_api_key"
        assert _anthropic_error(claude_reply, 401)["type"] == "authentication_error"
    assert gateway.mock.calls == []
    _still_serving(gateway)


def test_item_6_the_bearer_scheme_is_case_insensitive_and_x_api_key_works(gateway: Gateway) -> None:
    with httpx.Client(base_url=gateway.url, timeout=10) as bare:
        assert bare.post(CHAT, json=HELLO, headers={"authorization": f"bearer {MASTER_KEY}"}).status_code == 200
        assert bare.post(MESSAGES, json=CLAUDE, headers={"x-api-key": MASTER_KEY}).status_code == 200


def _raw(gateway: Gateway, head: bytes, body: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", gateway.port), timeout=10)
    sock.sendall(head + body)
    return sock


def _request_head(path: str, length: int) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"authorization: Bearer {MASTER_KEY}\r\ncontent-length: {length}\r\n\r\n"
    ).encode()


def test_item_6_a_client_that_vanishes_mid_body_or_mid_stream_leaves_the_gateway_serving(gateway: Gateway) -> None:
    body = json.dumps({**HELLO, "stream": True}).encode()
    half = _raw(gateway, _request_head(CHAT, len(body)), body[: len(body) // 2])
    half.close()  # gone before the body ended
    gateway.mock.push(" ".join(["word"] * 2000))
    vanishing = _raw(gateway, _request_head(CHAT, len(body)), body)
    assert vanishing.recv(64)
    vanishing.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    vanishing.close()  # reset mid-stream
    _still_serving(gateway)


def test_item_6_a_client_reading_a_stream_slowly_does_not_hold_up_others(gateway: Gateway) -> None:
    gateway.mock.push(" ".join(["slow"] * 4000))  # ~850 kB of events: more than the socket buffers hold
    body = json.dumps({**HELLO, "stream": True}).encode()
    slow = socket.create_connection(("127.0.0.1", gateway.port), timeout=10)
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
    slow.sendall(_request_head(CHAT, len(body)) + body)
    received = slow.recv(1024)
    assert b"200" in received.split(b"\r\n", 1)[0]
    started = time.monotonic()
    for _ in range(5):
        _still_serving(gateway)  # answered while the slow reader's stream waits on its window
    assert time.monotonic() - started < 5
    data = bytearray(received)
    while not data.endswith(b"data: [DONE]\n\n\r\n") and (chunk := slow.recv(65536)):
        data += chunk  # now read it all: the stream was held back, not lost
    slow.close()
    assert data.count(b'"content":" slow"') == 3999
