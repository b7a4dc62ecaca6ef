"""Issue 34 item 4: Bedrock's ConverseStream request sent without botocore's per-call pipeline
(``llmplex_bedrock.direct``): the request boto3 would send, byte for byte at the transport (a fixed clock and
uuid), its SigV4 signature verifying at the server, an HTTP error before the stream as boto3's own ``ClientError``
(same class, message and response dict), sync and async (on aiohttp, no worker thread)."""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import hmac
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest
from botocore import auth as botocore_auth
from botocore.exceptions import ClientError, ParamValidationError
from llmplex_bedrock import aio as bedrock_aio
from llmplex_bedrock import direct as bedrock_direct
from llmplex_bedrock import hooks as bedrock_hooks
from llmplex_bedrock.clients import close_client, create_client, sender_of
from llmplex_bedrock.settings import BedrockSettings

import llmplex
from llmplex.http import sync_client
from tests.plugins.bedrock.conftest import _no_aws_environment  # noqa: F401 (autouse: no real AWS chain)
from tests.plugins.bedrock.wire import stream_frames
from tests.support.stream_server import Reply, StreamServer

KEY_ID = "AKIAIOSFODNN7LEANREQ0"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiLEANREQUEST"
TOKEN = "session-token-lean-request"
HAIKU = "anthropic.claude-3-5-haiku-20241022-v1:0"
EVENTSTREAM = "application/vnd.amazon.eventstream"
NOW = datetime.datetime(2026, 12, 2, 21, 0, 0, tzinfo=datetime.UTC)

PAYLOADS: dict[str, dict[str, Any]] = {
    "text": {"modelId": HAIKU, "messages": [{"role": "user", "content": [{"text": "hi"}]}]},
    "everything": {
        "modelId": "arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.anthropic.claude v1/é",
        "system": [{"text": "be brief ☃"}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"text": 'what is this? \u0000 \\ "'},
                    {"image": {"format": "png", "source": {"bytes": b"\x89PNG\r\n\x1a\n\x00\xff"}}},
                    {"document": {"format": "txt", "name": "notes", "source": {"bytes": b"plain"}}},
                ],
            },
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 1}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "2"}]}}]},
        ],
        "inferenceConfig": {"maxTokens": 12, "temperature": 0.25, "topP": 1.0, "stopSequences": ["\n\n"]},
        "toolConfig": {
            "tools": [{"toolSpec": {"name": "add", "inputSchema": {"json": {"type": "object", "x": [1.5, None]}}}}],
            "toolChoice": {"auto": {}},
        },
        "additionalModelRequestFields": {"top_k": 5, "nested": {"big": 12345678901234567890}},
    },
}


def _settings(url: str | None = "http://127.0.0.1:9", token: str | None = TOKEN, **more: Any) -> BedrockSettings:
    keys = {"aws_access_key_id": KEY_ID, "aws_secret_access_key": SECRET, "aws_session_token": token}
    return BedrockSettings(region="eu-west-3", endpoint_url=url, **keys, **more)


@pytest.fixture
def fixed(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's signing clock and the invocation id, fixed for both paths."""
    monkeypatch.setattr(botocore_auth, "get_current_datetime", lambda: NOW)
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=34))


Sent = tuple[str, str, list[tuple[bytes, bytes]], bytes]


def _recorder(sent: list[Sent]) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        sent.append((request.method, str(request.url), list(request.headers.raw), request.read()))
        return httpx.Response(200, headers={"content-type": EVENTSTREAM}, content=b"")

    return handler


@pytest.mark.parametrize("payload", list(PAYLOADS))
@pytest.mark.parametrize("url", ["http://127.0.0.1:9", None], ids=["endpoint_url", "AWS endpoint"])
@pytest.mark.parametrize("token", [TOKEN, None], ids=["session token", "no token"])
@pytest.mark.usefixtures("fixed")
def test_item_4_bedrock_lean_request_is_boto3s_at_the_transport(payload: str, url: str | None, token: str) -> None:
    """What httpx is handed, sync (the plugin's httpx client) and async (what goes to aiohttp), equals what boto3's
    own ``converse_stream`` hands it: method, URL, every header in order, the body."""
    sent: list[Sent] = []
    client = create_client(_settings(url, token))
    sender = sender_of(client)
    assert sender is not None
    sender.http = sync_client(httpx, transport=httpx.MockTransport(_recorder(sent)))
    client.converse_stream(**PAYLOADS[payload])  # boto3's whole pipeline, sent through the same sender
    lean = bedrock_direct.lean_request(client)
    assert lean is not None
    bedrock_hooks._open(lean, PAYLOADS[payload]).close()

    async def asynchronous() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(_recorder(sent))) as http:
            await (await bedrock_aio.aopen(lean, http, PAYLOADS[payload], 60.0)).aclose()

    asyncio.run(asynchronous())
    close_client(client)
    assert sent[0] == sent[1] == sent[2]
    names = [name for name, _ in sent[0][2]]
    assert b"Authorization" in names and (b"X-Amz-Security-Token" in names) == (token is not None)
    assert dict(sent[0][2])[b"amz-sdk-invocation-id"] == str(uuid.UUID(int=34)).encode()


def _sigv4_valid(method: str, path: str, headers: dict[str, str], body: bytes) -> bool:
    """AWS Signature Version 4 checked from its specification (not botocore's code): canonical request, string to
    sign, signing key derived from the secret, signature compared."""
    credential, signed, signature = (part.split("=", 1)[1] for part in headers["authorization"].split(", "))
    _, date, region, service, _ = credential.split("/")
    names = signed.split(";")
    split = urlsplit(path)
    canonical_path = "/".join(quote(segment, safe="-_.~") for segment in split.path.split("/"))
    canonical = "\n".join(
        [
            method,
            canonical_path,
            split.query,
            *(f"{name}:{' '.join(headers[name].split())}" for name in names),
            "",
            signed,
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = f"AWS4-HMAC-SHA256\n{headers['x-amz-date']}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    key = f"AWS4{SECRET}".encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature) and service == "bedrock" and region == "eu-west-3"


def _config(url: str) -> dict[str, Any]:
    keys = {"aws_access_key_id": KEY_ID, "aws_secret_access_key": SECRET, "aws_session_token": TOKEN}
    return {"providers": {"bedrock": {"endpoint_url": url, "region": "eu-west-3", **keys}}}


opened: list[str] = []


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records each lean opening (``sync``/``async``) and each boto3 ``converse_stream``."""
    opened.clear()
    lean_open, lean_aopen = bedrock_hooks._open, bedrock_hooks.aopen

    def sync_open(*args: Any) -> Any:
        opened.append("sync")
        return lean_open(*args)

    async def async_open(*args: Any) -> Any:
        opened.append("async")
        return await lean_aopen(*args)

    monkeypatch.setattr(bedrock_hooks, "_open", sync_open)
    monkeypatch.setattr(bedrock_hooks, "aopen", async_open)
    return opened


def _text(url: str, mode: str, **kwargs: Any) -> str:
    client = llmplex.Client(_config(url), throttle={"max_attempts": 1})

    async def read() -> str:
        return "".join([e.text or "" async for e in client.astream(f"bedrock:{HAIKU}", "hi", **kwargs)])

    try:
        if mode == "stream":
            return "".join(e.text or "" for e in client.stream(f"bedrock:{HAIKU}", "hi", **kwargs))
        return asyncio.run(read())
    finally:
        client.close()


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_bedrock_lean_request_signature_verifies_at_the_server(mode: str, counted: list[str]) -> None:
    from llmplex.testing import Reply as Said

    with StreamServer() as server:
        server.script(Reply(200, tuple(stream_frames(Said("Hi there"))), EVENTSTREAM))
        assert _text(server.url, mode) == "Hi there"
        (request,) = server.requests
    assert counted == ["sync" if mode == "stream" else "async"]
    headers = dict(request.headers)
    assert request.path == "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream"
    assert json.loads(request.body)["messages"] == [{"role": "user", "content": [{"text": "hi"}]}]
    assert _sigv4_valid("POST", request.path, headers, request.body)
    assert headers["x-amz-security-token"] == TOKEN and headers["amz-sdk-request"] == "attempt=1; max=1"
    assert headers["user-agent"].startswith("Boto3/") and headers["user-agent"].endswith(" llmplex")


def test_item_4_bedrock_signature_check_rejects_a_changed_request() -> None:
    """The test's own verifier fails a body or a signed header changed after signing."""
    client = create_client(_settings())
    lean = bedrock_direct.lean_request(client)
    assert lean is not None
    prepared = lean.build(PAYLOADS["text"])
    headers = {str(k).lower(): v.decode() if isinstance(v, bytes) else v for k, v in prepared.headers.items()}
    headers["host"] = "127.0.0.1:9"
    path = prepared.url.removeprefix("http://127.0.0.1:9")
    body = bytes(prepared.body)
    assert _sigv4_valid("POST", path, headers, body)
    assert not _sigv4_valid("POST", path, headers, body + b" ")
    assert not _sigv4_valid("POST", path, {**headers, "x-amz-security-token": "other"}, body)
    close_client(client)


def _error_answer(status: int, name: str | None, body: bytes | None = None) -> Reply:
    headers = {"x-amzn-RequestId": "req-34"}
    if name:
        headers["x-amzn-ErrorType"] = f"{name}:http://internal.amazon.com/"
    return Reply.json(
        status, body if body is not None else json.dumps({"message": f"{name} said no"}).encode(), headers
    )


ERRORS = {
    "429 ThrottlingException": _error_answer(429, "ThrottlingException"),
    "400 ValidationException": _error_answer(400, "ValidationException"),
    "403 AccessDeniedException": _error_answer(403, "AccessDeniedException"),
    "424 ModelErrorException with fields": _error_answer(
        424, "ModelErrorException", b'{"message": "broke", "originalStatusCode": 500, "resourceName": "m"}'
    ),
    "500 body not JSON": _error_answer(500, None, b"<html>gateway</html>"),
    "404 unknown error name": _error_answer(404, "SomethingNewException"),
}


def _raised(opening: Callable[[], Any]) -> tuple[type[BaseException], str, dict[str, Any]]:
    with pytest.raises(ClientError) as caught:
        opening()
    response = dict(caught.value.response)
    metadata = dict(response["ResponseMetadata"])
    metadata["HTTPHeaders"] = {k: v for k, v in metadata["HTTPHeaders"].items() if k not in ("date", "server")}
    return type(caught.value), str(caught.value), {**response, "ResponseMetadata": metadata}


@pytest.mark.parametrize("name", list(ERRORS))
def test_item_4_bedrock_http_error_is_boto3s_client_error_both_ways(name: str) -> None:
    """An error status before the stream: boto3's modelled exception class, its message and its response dict
    (error code and message, modelled fields, status, headers, request id, retry count), sync and async."""
    with StreamServer() as server:
        server.script(ERRORS[name])
        client = create_client(_settings(server.url))
        lean = bedrock_direct.lean_request(client)
        assert lean is not None
        payload = PAYLOADS["text"]
        boto3s = _raised(lambda: client.converse_stream(**payload))
        sync = _raised(lambda: bedrock_hooks._open(lean, payload))

        async def asynchronous() -> None:
            async with bedrock_aio.async_http() as http:
                await bedrock_aio.aopen(lean, http, payload, 5.0)

        asyncio_raised = _raised(lambda: asyncio.run(asynchronous()))
        close_client(client)
    assert boto3s == sync == asyncio_raised
    assert boto3s[2]["ResponseMetadata"]["RetryAttempts"] == 0


def test_item_4_bedrock_invalid_parameters_fail_as_boto3s() -> None:
    """Parameters boto3 refuses are refused with its own ``ParamValidationError`` before anything is sent."""
    client = create_client(_settings())
    lean = bedrock_direct.lean_request(client)
    assert lean is not None
    bad = {"modelId": HAIKU, "messages": [{"role": "user", "content": "not a list"}], "unknownParam": 1}
    with pytest.raises(ParamValidationError) as boto3s:
        client.converse_stream(**bad)
    with pytest.raises(ParamValidationError) as leans:
        lean.build(bad)
    assert str(boto3s.value) == str(leans.value)
    close_client(client)


def test_item_4_bedrock_async_stream_needs_no_worker_thread(
    monkeypatch: pytest.MonkeyPatch, counted: list[str]
) -> None:
    """The lean async stream sends and reads on the event loop: no ``asyncio.to_thread`` anywhere in it."""
    from llmplex.testing import Reply as Said

    def refused(*_: Any, **__: Any) -> Iterator[Any]:
        raise AssertionError("a worker thread was used")

    monkeypatch.setattr(bedrock_aio.asyncio, "to_thread", refused)
    with StreamServer() as server:
        server.script(Reply(200, tuple(stream_frames(Said("on the loop"))), EVENTSTREAM))
        assert _text(server.url, "astream") == "on the loop"
    assert counted == ["async"]
