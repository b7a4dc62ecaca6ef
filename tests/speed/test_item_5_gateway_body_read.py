"""Issue 34 item 5: the pipeline reads a request's body from the server's messages, not through an async generator.

``Pipeline.read_body`` went through Starlette's ``Request.stream`` (an async generator, made and run per request)
and joined what it gave. It now awaits the server's ``receive`` itself: a body that came whole (one message, as
nearly every request's does) is that message's bytes, handed on as they are. What must not change: a declared
length over ``[gateway] max_body_bytes`` is refused before anything is read; a body that grows past the limit is
refused (413) as soon as it does, the rest unread; a trickling body is read whole; a client that leaves mid-body
is a ``ConnectionError``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from starlette.requests import Request

import llmplex
from llmplex.config.schema import GatewayConfig
from llmplex.gateway.errors import GatewayError
from llmplex.gateway.keys.access import MasterKeyAuthenticator
from llmplex.gateway.pipeline import Pipeline
from tests.gateway.harness import MASTER_KEY, gateway_config

LIMIT = 1024


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    client = llmplex.Client(gateway_config())
    return Pipeline(client, GatewayConfig(max_body_bytes=LIMIT), MasterKeyAuthenticator(MASTER_KEY))


class Server:
    """The server's side of ``receive``: the messages given, in order; how many were taken."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages
        self.taken = 0

    async def receive(self) -> dict[str, Any]:
        message = self.messages[self.taken]
        self.taken += 1
        return message


def _request(server: Server, length: int | None = None) -> Request:
    headers = [(b"content-type", b"application/json")]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    return Request(
        {"type": "http", "method": "POST", "path": "/v1/chat/completions", "headers": headers}, server.receive
    )


def _chunks(parts: list[bytes]) -> list[dict[str, Any]]:
    return [{"type": "http.request", "body": part, "more_body": i < len(parts) - 1} for i, part in enumerate(parts)]


def test_item_5_gateway_a_whole_body_is_the_message_bytes(pipeline: Pipeline) -> None:
    body = b'{"model": "mock:echo", "messages": []}'
    server = Server([{"type": "http.request", "body": body}])
    request = _request(server, len(body))

    def no_stream() -> Any:
        raise AssertionError("the body was read through Request.stream")

    request.stream = no_stream  # type: ignore[method-assign]
    assert asyncio.run(pipeline.read_body(request)) is body
    assert server.taken == 1


def test_item_5_gateway_a_trickling_body_is_read_whole(pipeline: Pipeline) -> None:
    parts = [b"a", b"", b"bc", b"d" * 100, b""]
    server = Server(_chunks(parts))
    assert asyncio.run(pipeline.read_body(_request(server))) == b"".join(parts)
    assert server.taken == len(parts)
    at_limit = Server(_chunks([b"x" * (LIMIT - 1), b"y"]))
    assert asyncio.run(pipeline.read_body(_request(at_limit))) == b"x" * (LIMIT - 1) + b"y"
    other = Server([{"type": "http.other"}, *_chunks([b"a", b"b"])])  # a message of no known kind is passed over
    assert asyncio.run(pipeline.read_body(_request(other))) == b"ab"


def test_item_5_gateway_a_body_past_the_limit_is_refused_unread(pipeline: Pipeline) -> None:
    declared = Server(_chunks([b"x"]))
    with pytest.raises(GatewayError) as refused:
        asyncio.run(pipeline.read_body(_request(declared, LIMIT + 1)))
    assert refused.value.status == 413 and declared.taken == 0
    growing = Server(_chunks([b"x" * 600, b"x" * 600, b"x" * 600, b""]))
    with pytest.raises(GatewayError) as refused:
        asyncio.run(pipeline.read_body(_request(growing)))
    assert refused.value.status == 413 and growing.taken == 2
    whole = Server(_chunks([b"x" * (LIMIT + 1)]))  # announced no length, came whole
    with pytest.raises(GatewayError) as refused:
        asyncio.run(pipeline.read_body(_request(whole)))
    assert refused.value.status == 413


def test_item_5_gateway_a_client_leaving_mid_body_is_a_connection_error(pipeline: Pipeline) -> None:
    server = Server([*_chunks([b"a", b"b"])[:1], {"type": "http.disconnect"}])
    with pytest.raises(ConnectionError):
        asyncio.run(pipeline.read_body(_request(server)))
    assert server.taken == 2
