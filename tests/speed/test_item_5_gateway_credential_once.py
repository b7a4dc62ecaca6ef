"""Issue 34 item 5: a request's credential is read from its headers once, by the ``Door``.

The door read the credential from the raw headers (to cap a key's requests in flight, to throttle failed
authentications), then the pipeline read it again with ``credential_of`` over Starlette's ``Headers``, by other
rules: with several ``Authorization`` headers the door counted the last bearer token while the pipeline
authenticated the first one. The door now reads it with ``credential_of`` and leaves it in the request's scope
(``CREDENTIAL``), where the pipeline and the admin API take it. What must not change: which key is authenticated
(the first ``Authorization`` header when it is a bearer token, else the first ``x-api-key``), whatever other
headers come with it; and the in-flight cap counts that key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.requests import Request

from llmplex.gateway.guard import door
from tests.gateway.harness import MASTER_KEY, Gateway, gateway_config
from tests.gateway.keyed_support import wait_for
from tests.tenancy.guard_support import connect, door_of, guarded_gateway, read_answer

CHAT = "/v1/chat/completions"
HELLO = json.dumps({"model": "mock:echo", "messages": [{"role": "user", "content": "hello"}]}).encode()


@pytest.fixture(scope="module")
def gateway() -> Iterator[Gateway]:
    with guarded_gateway(gateway_config(gateway={"max_in_flight_per_key": 1})) as running:
        yield running


def _head(headers: list[tuple[str, str]], length: int = len(HELLO)) -> bytes:
    lines = [f"POST {CHAT} HTTP/1.1", "host: 127.0.0.1", "content-type: application/json"]
    lines += [f"{name}: {value}" for name, value in headers]
    lines.append(f"content-length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _ask(gateway: Gateway, headers: list[tuple[str, str]]) -> tuple[int, dict[str, str], bytes]:
    with connect(gateway.port) as sock:
        sock.sendall(_head(headers) + HELLO)
        return read_answer(sock)


def test_item_5_gateway_the_door_reads_the_credential_once(gateway: Gateway, monkeypatch: Any) -> None:
    reads: list[object] = []
    original = door.credential_of

    def counted(headers: Any) -> str | None:
        reads.append(headers)
        return original(headers)

    monkeypatch.setattr(door, "credential_of", counted)
    status, _, body = _ask(gateway, [("authorization", f"Bearer {MASTER_KEY}")])
    assert status == 200, body
    assert len(reads) == 1


SEVERAL = {
    "first-bearer-is-the-key": ([("authorization", f"Bearer {MASTER_KEY}"), ("authorization", "Bearer junk")], 200),
    "second-bearer-is-not": ([("authorization", "Bearer junk"), ("authorization", f"Bearer {MASTER_KEY}")], 401),
    "first-x-api-key-is-the-key": ([("x-api-key", MASTER_KEY), ("x-api-key", "junk")], 200),
    "second-x-api-key-is-not": ([("x-api-key", "junk"), ("x-api-key", MASTER_KEY)], 401),
    "basic-then-x-api-key": ([("authorization", "Basic abc"), ("x-api-key", MASTER_KEY)], 200),
    "bearer-before-x-api-key": ([("x-api-key", "junk"), ("authorization", f"Bearer {MASTER_KEY}")], 200),
    "a-wrong-bearer-wins-over-a-right-x-api-key": (
        [("authorization", "Bearer junk"), ("x-api-key", MASTER_KEY)],
        401,
    ),
    "padded-key": ([("authorization", f"Bearer   {MASTER_KEY}  ")], 200),
    "no-key": ([("authorization", "Bearer   ")], 401),
}


@pytest.mark.parametrize(("headers", "status"), list(SEVERAL.values()), ids=list(SEVERAL))
def test_item_5_gateway_several_credential_headers_authenticate_as_before(
    gateway: Gateway, headers: list[tuple[str, str]], status: int
) -> None:
    got, _, body = _ask(gateway, headers)
    assert got == status, body
    assert MASTER_KEY[:12].encode() not in body and b"junk" not in body


def test_item_5_gateway_the_in_flight_cap_counts_the_key_authenticated(gateway: Gateway) -> None:
    """A second bearer header after the key does not put the request under another key's count."""
    held = connect(gateway.port)
    with held:
        held.sendall(_head([("authorization", f"Bearer {MASTER_KEY}")]))  # in flight: its body not yet sent
        wait_for(lambda: sum(door_of(gateway)._in_flight.values()) == 1)
        status, headers, body = _ask(
            gateway, [("authorization", f"Bearer {MASTER_KEY}"), ("authorization", "Bearer x")]
        )
        assert status == 429 and int(headers["retry-after"]) >= 1, body
        held.sendall(HELLO)
        assert read_answer(held)[0] == 200
    wait_for(lambda: not door_of(gateway)._in_flight)
    assert _ask(gateway, [("authorization", f"Bearer {MASTER_KEY}"), ("authorization", "Bearer x")])[0] == 200


def test_item_5_gateway_a_request_past_no_door_reads_its_headers() -> None:
    """Where no door has read the credential (an application without one), it is read from the headers."""
    scope = {"type": "http", "headers": [(b"x-api-key", b" k1 "), (b"authorization", b"Basic z")]}
    assert door.credential_presented(Request(scope)) == "k1"
    assert door.credential_presented(Request({**scope, door.CREDENTIAL: None})) is None
