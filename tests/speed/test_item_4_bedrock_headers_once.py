"""Issue 34 item 4: Bedrock's sync sender normalizes a request's headers once. Where botocore's headers give the
``Content-Length`` and no ``Host``, ``HttpxSender`` builds httpx's ``Request`` from a byte stream with the ``Host``
put first, as ``Request(content=...)`` would end up after normalizing the headers a second time: one ``Headers``
built per request, and the same method, URL, headers (names, order, case, values), body and timeout reach the
transport as through ``Client.build_request``, with a ``Host``, a ``Transfer-Encoding`` or no ``Content-Length``
given too (those still built by ``Request(content=...)``)."""

from __future__ import annotations

from typing import Any, cast

import httpx
import pytest
from botocore.awsrequest import AWSPreparedRequest
from llmplex_bedrock.transport import HttpxSender, call_timeout

from llmplex.http import sync_client

URL = "https://bedrock-runtime.eu-west-3.amazonaws.com/model/anthropic.claude%3A0/converse-stream"
BODY = b'{"messages":[{"role":"user","content":[{"text":"hi"}]}]}'
HEADERS: dict[str, Any] = {
    "Content-Type": b"application/json",
    "User-Agent": b"Boto3/1.40 md/Botocore#1.40 llmplex",
    "X-Amz-Date": b"20261204T101010Z",
    "Authorization": b"AWS4-HMAC-SHA256 Credential=AKIA/20261204/eu-west-3/bedrock/aws4_request, Signature=ab",
    "amz-sdk-invocation-id": b"00000000-0000-4000-8000-000000000034",
    "amz-sdk-request": b"attempt=1; max=1",
    "Content-Length": str(len(BODY)),
}

Seen = tuple[str, str, list[tuple[bytes, bytes]], bytes, dict[str, Any]]


def _recorder(seen: list[Seen]) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, str(request.url), list(request.headers.raw), request.read(), request.extensions))
        return httpx.Response(200, content=b"")

    return httpx.MockTransport(handle)


def _sent(headers: dict[str, Any], body: bytes = BODY) -> Seen:
    seen: list[Seen] = []
    sender = HttpxSender(60.0)
    sender.http.close()
    sender.http = sync_client(httpx, transport=_recorder(seen))
    with call_timeout(7.5):
        sender(AWSPreparedRequest("POST", URL, cast(Any, headers), body, True)).raw.close()
    return seen[-1]


def _built(headers: dict[str, Any], body: bytes = BODY) -> Seen:
    seen: list[Seen] = []
    http = sync_client(httpx, transport=_recorder(seen))
    text = [(name, value if isinstance(value, str) else value.decode("latin-1")) for name, value in headers.items()]
    http.send(http.build_request("POST", URL, headers=text, content=body, timeout=httpx.Timeout(7.5))).close()
    return seen[-1]


def test_item_4_bedrock_sender_normalizes_the_headers_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """One ``httpx.Headers`` built for botocore's request (``Request(content=...)`` built two), what reaches the
    transport unchanged, and the request's body readable as ``content``."""
    built: list[int] = []
    init = httpx.Headers.__init__

    def counted(self: httpx.Headers, *args: Any, **kwargs: Any) -> None:
        built.append(1)
        init(self, *args, **kwargs)

    expected = _built(HEADERS)
    seen: list[Seen] = []
    sender = HttpxSender(60.0)
    sender.http.close()
    sender.http = sync_client(httpx, transport=_recorder(seen))
    prepared = AWSPreparedRequest("POST", URL, cast(Any, HEADERS), BODY, True)
    with call_timeout(7.5):
        sender(prepared).raw.close()  # the URL parsed and kept first
        monkeypatch.setattr(httpx.Headers, "__init__", counted)
        request = sender._request(
            sender.http, "POST", URL, [(k.encode(), _bytes(v)) for k, v in HEADERS.items()], BODY, httpx.Timeout(7.5)
        )
    assert built == [1] and request.content == BODY
    assert seen[-1] == expected


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


@pytest.mark.parametrize(
    "headers",
    [
        {**HEADERS, "Host": b"bedrock-runtime.eu-west-3.amazonaws.com"},
        {**HEADERS, "Transfer-Encoding": b"chunked"},
        {name: value for name, value in HEADERS.items() if name != "Content-Length"},
        {**HEADERS, "Content-Length": "3"},
    ],
    ids=["a Host given", "a Transfer-Encoding given", "no Content-Length", "a Content-Length of its own"],
)
def test_item_4_bedrock_sender_sends_what_build_request_builds(headers: dict[str, Any]) -> None:
    """Whatever the headers, the transport sees what ``build_request`` gives."""
    body = BODY[:3] if headers.get("Content-Length") == "3" else BODY
    assert _sent(headers, body) == _built(headers, body)


def test_item_4_bedrock_sender_sends_an_empty_body_as_build_request_does() -> None:
    """A request without a body (``Content-Length: 0``) too."""
    headers = {**HEADERS, "Content-Length": "0"}
    assert _sent(headers, b"") == _built(headers, b"")
