"""Issue 31 item 6: hostile HTTP is refused before it costs anything.

The gateway runs on the HTTP protocol ``llmplex serve`` runs (``guarded_gateway``). Heads past
the size or count limit are answered 431 and never reach the application; a request without
a valid key is answered 401 once its headers are in, its body never read; a key's requests in
flight and the open connections are capped (429 / 503 with ``Retry-After``); a head that
trickles in is cut off (408).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from llmplex.gateway.pipeline import Pipeline
from tests.gateway.harness import MASTER_KEY, Gateway, gateway_config
from tests.gateway.keyed_support import wait_for
from tests.tenancy.guard_support import (
    closed_by_server,
    connect,
    door_of,
    guarded_gateway,
    request_bytes,
)
from tests.tenancy.guard_support import read_answer as raw_answer

CHAT = "/v1/chat/completions"
HELLO = json.dumps({"model": "mock:echo", "messages": [{"role": "user", "content": "hello"}]}).encode()
AUTH = {"authorization": f"Bearer {MASTER_KEY}", "content-type": "application/json"}


@pytest.fixture(scope="module")
def shared() -> Iterator[Gateway]:
    """One gateway with the default limits for the tests that only refuse things (refusals change nothing)."""
    with guarded_gateway(gateway_config()) as running:
        yield running


# the request ids of the application's answers read since the ``gateway`` fixture began (its tests talk to the
# shared gateway alone): a request's record is made once its answer was sent, so the client can hold the answer first
_answered: list[str] = []


def read_answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """``guard_support.read_answer``, noting the request id of an answer the application gave (it will be recorded)."""
    status, headers, body = raw_answer(sock)
    if "x-request-id" in headers:
        _answered.append(headers["x-request-id"])
    return status, headers, body


@pytest.fixture
def gateway(shared: Gateway) -> Iterator[Gateway]:
    shared.mock.reset()
    shared.recorder.records.clear()
    _answered.clear()
    yield shared
    # this test's records are made before the next test clears the list (a bounded wait, not a margin): one landing
    # after the clear would break the next test's `records == []` (4 of 1000 at once after the answer, under load)
    for request_id in _answered:
        shared.recorder.wait_for(lambda record, request_id=request_id: record.request_id == request_id, timeout=30)


def _ask(gateway: Gateway, headers: dict[str, str], body: bytes = HELLO) -> tuple[int, dict[str, str], bytes]:
    with connect(gateway.port) as sock:
        sock.sendall(request_bytes("POST", CHAT, headers, body))
        return read_answer(sock)


def _serves(gateway: Gateway) -> None:
    status, _, body = _ask(gateway, AUTH)
    assert status == 200, body


def test_item_6_a_head_past_64_kib_is_431_and_never_reaches_the_application(gateway: Gateway) -> None:
    status, headers, body = _ask(gateway, {**AUTH, "x-pad": "a" * (65 * 1024)})
    assert status == 431 and headers["connection"] == "close"
    error = json.loads(body)["error"]
    assert error["code"] == "request_header_fields_too_large" and "max_header_bytes" in error["message"]
    assert gateway.recorder.records == [] and gateway.mock.calls == []  # the application never saw it
    status, _, _ = _ask(gateway, {**AUTH, "x-pad": "a" * (60 * 1024)})  # under the limit: served
    assert status == 200
    with connect(gateway.port) as sock:  # the Anthropic API gets its own error shape
        sock.sendall(request_bytes("POST", "/v1/messages", {**AUTH, "x-pad": "b" * (70 * 1024)}, HELLO))
        status, _, body = read_answer(sock)
    assert status == 431 and json.loads(body)["type"] == "error"


def test_item_6_a_16_mb_header_line_is_cut_off_after_twice_the_limit(gateway: Gateway) -> None:
    sent = 0
    with connect(gateway.port) as sock:
        sock.sendall(f"POST {CHAT} HTTP/1.1\r\nhost: x\r\nx-endless: ".encode())
        chunk = b"z" * 65536
        try:
            while sent < 16 * 1024 * 1024:
                sent += sock.send(chunk)
        except OSError:  # the gateway closed the connection: nothing more is taken
            pass
        status, _, body = read_answer(sock)
    assert status == 431, body
    assert sent < 16 * 1024 * 1024  # refused long before the line ended (what was sent sits in kernel buffers)
    assert gateway.recorder.records == []
    _serves(gateway)


def test_item_6_more_headers_than_the_count_limit_is_431(gateway: Gateway) -> None:
    many = {f"x-h{i}": "1" for i in range(101)}
    status, _, body = _ask(gateway, {**AUTH, **many})
    assert status == 431 and "max_header_count" in json.loads(body)["error"]["message"]
    status, _, _ = _ask(gateway, {**AUTH, **{f"x-h{i}": "1" for i in range(90)}})
    assert status == 200


def test_item_6_the_head_limits_are_configurable() -> None:
    config = gateway_config(gateway={"max_header_bytes": 4096, "max_header_count": 20})
    with guarded_gateway(config) as gateway:
        assert _ask(gateway, {**AUTH, "x-pad": "a" * 5000})[0] == 431
        assert _ask(gateway, {**AUTH, **{f"x-h{i}": "1" for i in range(25)}})[0] == 431
        assert _ask(gateway, {**AUTH, "x-pad": "a" * 3000})[0] == 200


API_PATHS = ["/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1/messages/count_tokens", "/v1/embeddings"]


@pytest.mark.parametrize("path", API_PATHS)
@pytest.mark.parametrize("key", [None, "sk-wrong-key"], ids=["no-key", "wrong-key"])
def test_item_6_a_request_without_a_valid_key_is_401_before_its_body_arrives(
    gateway: Gateway, key: str | None, path: str
) -> None:
    headers = {"content-type": "application/json", "content-length": str(10 * 1024**3), "expect": "100-continue"}
    if key is not None:
        headers["x-api-key"] = key
    with connect(gateway.port) as sock:  # 10 GB announced, not one byte of it sent
        head = [f"POST {path} HTTP/1.1", "host: x", *(f"{k}: {v}" for k, v in headers.items())]
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        status, answer_headers, body = read_answer(sock)
        assert status == 401, body  # no "100 Continue" first: the client is never asked for the body
        assert answer_headers["connection"] == "close" and closed_by_server(sock)
    error = json.loads(body)["error"]  # each API's own shape
    assert error["type"] == "authentication_error" if "messages" in path else error["code"] == "invalid_api_key"


def test_item_6_a_never_ending_body_without_a_key_is_never_read(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[object] = []
    original = Pipeline.read_body

    async def counted(self: Pipeline, request: Any) -> bytes:
        reads.append(request)
        return await original(self, request)

    monkeypatch.setattr(Pipeline, "read_body", counted)
    sent = 0
    with connect(gateway.port) as sock:
        head = f"POST {CHAT} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer nope\r\ntransfer-encoding: chunked\r\n\r\n"
        sock.sendall(head.encode())
        chunk = b"10000\r\n" + b"{" * 65536 + b"\r\n"  # chunks of 64 KiB, never a last one
        try:
            while sent < 64 * 1024 * 1024:
                sent += sock.send(chunk)
        except OSError:  # closed by the gateway after its 401
            pass
        status, _, _ = read_answer(sock)
    assert status == 401 and reads == []  # the body was never read by the gateway
    assert sent < 64 * 1024 * 1024
    _serves(gateway)
    assert len(reads) == 1  # the authenticated request's body is read


def _held(gateway: Gateway, key: str) -> socket.socket:
    """A request of ``key`` in flight: its head sent, its body (announced) not yet."""
    sock = connect(gateway.port)
    head = f"POST {CHAT} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {key}\r\ncontent-length: {len(HELLO)}\r\n\r\n"
    sock.sendall(head.encode())
    return sock


def test_item_6_a_key_past_its_requests_in_flight_gets_429_with_retry_after() -> None:
    with guarded_gateway(gateway_config(gateway={"max_in_flight_per_key": 2})) as gateway:
        _serves(gateway)
        door = door_of(gateway)
        held = [_held(gateway, MASTER_KEY), _held(gateway, MASTER_KEY)]
        wait_for(lambda: sum(door._in_flight.values()) == 2)
        status, headers, body = _ask(gateway, AUTH)
        assert status == 429 and int(headers["retry-after"]) >= 1
        assert "max_in_flight_per_key" in json.loads(body)["error"]["message"]
        assert _ask(gateway, {**AUTH, "authorization": "Bearer sk-another"})[0] == 401  # the cap is per key
        for sock in held:
            with sock:
                sock.sendall(HELLO)
                assert read_answer(sock)[0] == 200
        wait_for(lambda: not door._in_flight)
        _serves(gateway)


def test_item_6_connections_past_the_cap_get_503_with_retry_after() -> None:
    with guarded_gateway(gateway_config(gateway={"max_connections": 2})) as gateway:
        first, second = connect(gateway.port), connect(gateway.port)
        for sock in (first, second):
            sock.sendall(request_bytes("GET", "/health/liveness", {}))
            assert read_answer(sock)[0] == 200
        with connect(gateway.port) as third:
            third.sendall(request_bytes("POST", CHAT, AUTH, HELLO))
            status, headers, body = read_answer(third)
            assert status == 503 and headers["retry-after"] == "1" and closed_by_server(third)
        assert "max_connections" in json.loads(body)["error"]["message"]
        assert gateway.recorder.records == []
        first.sendall(request_bytes("POST", CHAT, AUTH, HELLO))  # the connections let in keep being served
        assert read_answer(first)[0] == 200
        first.close()
        second.close()

        def served() -> bool:
            with connect(gateway.port) as sock:
                sock.sendall(request_bytes("GET", "/health/liveness", {}))
                return read_answer(sock)[0] == 200

        wait_for(served)  # room again once the gateway saw them close


def test_item_6_a_head_that_does_not_arrive_in_time_gets_408() -> None:
    with guarded_gateway(gateway_config(gateway={"header_timeout": 0.5})) as gateway:
        with connect(gateway.port) as sock:
            sock.sendall(f"POST {CHAT} HTTP/1.1\r\nhost: x\r\nauthori".encode())  # and then nothing
            status, _, body = read_answer(sock)
            assert status == 408 and closed_by_server(sock)
        assert "header_timeout" in json.loads(body)["error"]["message"]
        with connect(gateway.port) as silent:  # a connection that sends nothing is closed without an answer
            assert silent.recv(1) == b""
        reply = httpx.post(gateway.url + CHAT, content=HELLO, headers=AUTH, timeout=10)
        assert reply.status_code == 200
