"""Issue 34 item 4: Bedrock's lean sync stream hands the signed headers to its sender as botocore holds them
(``LeanRequest.sign``, ``HttpxSender.post``): no ``AWSPreparedRequest`` is built and no header is encoded to bytes
only to be read back, and what reaches httpx is what ``build`` and ``send`` give (``build`` itself unchanged: the
headers encoded, the ``Content-Length`` text and last)."""

from __future__ import annotations

import asyncio
import datetime
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from botocore import auth as botocore_auth
from llmplex_bedrock import aio as bedrock_aio
from llmplex_bedrock import direct as bedrock_direct
from llmplex_bedrock import hooks as bedrock_hooks
from llmplex_bedrock.clients import close_client, create_client, sender_of
from llmplex_bedrock.settings import BedrockSettings

from llmplex.http import sync_client
from tests.plugins.bedrock.conftest import _no_aws_environment  # noqa: F401 (autouse: no real AWS chain)

PAYLOAD = {
    "modelId": "anthropic.claude-3-5-haiku-20241022-v1:0",
    "messages": [{"role": "user", "content": [{"text": "hi"}]}],
}
Seen = tuple[str, str, list[tuple[bytes, bytes]], bytes]


@pytest.fixture
def lean(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[bedrock_direct.LeanRequest, list[Seen]]]:
    monkeypatch.setattr(
        botocore_auth, "get_current_datetime", lambda: datetime.datetime(2026, 12, 4, tzinfo=datetime.UTC)
    )
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=34))
    seen: list[Seen] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, str(request.url), list(request.headers.raw), request.read()))
        return httpx.Response(200, headers={"content-type": "application/vnd.amazon.eventstream"}, content=b"")

    settings = BedrockSettings(
        region="eu-west-3", endpoint_url="http://127.0.0.1:9", aws_access_key_id="AKIDSIGNED", aws_secret_access_key="s"
    )
    client = create_client(settings)
    sender = sender_of(client)
    assert sender is not None
    sender.http.close()
    sender.http = sync_client(httpx, transport=httpx.MockTransport(record))
    prepared = bedrock_direct.lean_request(client)
    assert prepared is not None
    yield prepared, seen
    close_client(client)


def test_item_4_bedrock_lean_stream_builds_no_prepared_request(
    lean: tuple[bedrock_direct.LeanRequest, list[Seen]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lean stream's request goes out with no ``AWSPreparedRequest`` built, as ``build`` then ``send`` send it."""
    prepared, seen = lean
    sender = sender_of(prepared.client)
    assert sender is not None
    sender.send(prepared.build(PAYLOAD)).close()
    built: list[Any] = []

    class Counted(bedrock_direct.AWSPreparedRequest):  # type: ignore[misc,name-defined]
        def __init__(self, *args: Any) -> None:
            built.append(args)
            super().__init__(*args)

    monkeypatch.setattr(bedrock_direct, "AWSPreparedRequest", Counted)
    bedrock_hooks._open(prepared, PAYLOAD).close()
    assert built == [] and len(seen) == 2 and seen[1] == seen[0]


def test_item_4_bedrock_sign_gives_builds_headers_as_text(lean: tuple[bedrock_direct.LeanRequest, list[Seen]]) -> None:
    """``sign``'s headers are ``build``'s before the endpoint encodes them: text, the ``Content-Length`` last; ``build``
    gives them encoded, the ``Content-Length`` as text, last, as ``AWSRequest.prepare`` leaves it."""
    prepared, _ = lean
    method, url, headers, body = prepared.sign(PAYLOAD)
    request = prepared.build(PAYLOAD)
    assert (method, url, body) == (request.method, request.url, request.body)
    assert all(type(value) is str for value in headers.values()) and list(headers)[-1] == "Content-Length"
    assert list(request.headers) == list(headers) and request.headers["Content-Length"] == headers["Content-Length"]
    assert {name: value.encode() for name, value in headers.items() if name != "Content-Length"} == {
        name: value for name, value in request.headers.items() if name != "Content-Length"
    }


def test_item_4_bedrock_async_lean_stream_builds_no_prepared_request(
    lean: tuple[bedrock_direct.LeanRequest, list[Seen]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The async lean stream's request is built from ``sign``'s headers too (no ``AWSPreparedRequest``), and is
    the sync one's (method, URL, headers, body)."""
    prepared, seen = lean
    bedrock_hooks._open(prepared, PAYLOAD).close()
    built: list[Any] = []

    class Counted(bedrock_direct.AWSPreparedRequest):  # type: ignore[misc,name-defined]
        def __init__(self, *args: Any) -> None:
            built.append(args)
            super().__init__(*args)

    async def record(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, str(request.url), list(request.headers.raw), await request.aread()))
        return httpx.Response(200, headers={"content-type": "application/vnd.amazon.eventstream"}, content=b"")

    async def opened() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(record)) as http:
            answer = await bedrock_aio.aopen(prepared, http, PAYLOAD, 60.0)
            await answer.aclose()

    monkeypatch.setattr(bedrock_direct, "AWSPreparedRequest", Counted)
    asyncio.run(opened())
    assert built == [] and len(seen) == 2
    sync, sent = seen
    assert sent[:2] == sync[:2] and sent[3] == sync[3]
    assert sorted(pair for pair in sent[2] if pair[0].lower() not in _CLIENTS) == sorted(
        pair for pair in sync[2] if pair[0].lower() not in _CLIENTS
    )


_CLIENTS = {b"accept", b"accept-encoding", b"connection"}
"""The httpx clients' own default headers (the two clients here are built apart; botocore's User-Agent replaces
httpx's in both, in another place: the headers are compared whatever their order)."""
