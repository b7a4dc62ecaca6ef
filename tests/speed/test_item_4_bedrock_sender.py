"""Issue 34 item 4: Bedrock's sync sender (``llmplex_bedrock.transport.HttpxSender``) builds httpx's ``Request``
itself where ``Client.build_request`` would add nothing but the client's default headers and the timeout, and asks
the cookie jar about an answer only when it sets cookies. What reaches the transport is what ``build_request`` and
``send`` gave before, for any client configuration (default headers replaced or kept, query parameters, cookies,
another URL), and cookies a server sets are kept and sent back as httpx does. The lean stream reads a 2xx answer's
body at once, with no ``AWSResponse`` built (only an error is read from one, into boto3's ``ClientError``)."""

from __future__ import annotations

from http.cookiejar import CookieJar
from typing import Any

import httpx
import pytest
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import ClientError
from llmplex_bedrock import direct as bedrock_direct
from llmplex_bedrock import hooks as bedrock_hooks
from llmplex_bedrock import transport as bedrock_transport
from llmplex_bedrock.clients import close_client, create_client, sender_of
from llmplex_bedrock.settings import BedrockSettings
from llmplex_bedrock.transport import HttpxSender, call_timeout

from llmplex.http import sync_client
from llmplex.testing import Reply
from tests.plugins.bedrock.conftest import _no_aws_environment  # noqa: F401 (autouse: no real AWS chain)
from tests.plugins.bedrock.wire import stream_frames

URL = "https://bedrock-runtime.eu-west-3.amazonaws.com/model/anthropic.claude%3A0/converse-stream"
BODY = b'{"messages":[{"role":"user","content":[{"text":"hi"}]}]}'
HEADERS: dict[str, Any] = {
    "X-Amz-Date": b"20261203T101010Z",
    "User-Agent": b"Boto3/1.40 md/Botocore#1.40 llmplex",
    "Content-Type": b"application/json",
    "Authorization": b"AWS4-HMAC-SHA256 Credential=AKIA/20261203/eu-west-3/bedrock/aws4_request, Signature=ab",
    "amz-sdk-invocation-id": b"00000000-0000-4000-8000-000000000022",
    "amz-sdk-request": b"attempt=1; max=1",
    "Content-Length": str(len(BODY)),
}

Seen = tuple[str, str, list[tuple[bytes, bytes]], bytes, dict[str, Any]]


class Recorder:
    """A transport recording each request; its answers set a cookie when ``cookie`` is given."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.cookie: str | None = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(
            (request.method, str(request.url), list(request.headers.raw), request.read(), dict(request.extensions))
        )
        headers = {"content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "r1"}
        if self.cookie is not None:
            headers["set-cookie"] = f"{self.cookie}; Path=/"
        return httpx.Response(200, headers=headers, content=b"")


def _sender(recorder: Recorder, **options: Any) -> HttpxSender:
    sender = HttpxSender(60.0)
    sender.http.close()
    sender.http = sync_client(httpx, transport=httpx.MockTransport(recorder), **options)
    return sender


def _send(sender: HttpxSender, url: str = URL, **headers: Any) -> None:
    request = AWSPreparedRequest("POST", url, {**HEADERS, **headers}, BODY, True)
    with call_timeout(7.5):
        sender(request).raw.close()


def _through_build_request(recorder: Recorder, url: str = URL, **options: Any) -> Seen:
    """What the sender handed httpx before: ``build_request`` then ``send`` on a client configured alike."""
    http = sync_client(httpx, transport=httpx.MockTransport(recorder), **options)
    headers = [(name, value if isinstance(value, str) else value.decode("latin-1")) for name, value in HEADERS.items()]
    request = http.build_request("POST", url, headers=headers, content=BODY, timeout=httpx.Timeout(7.5))
    http.send(request, stream=True).close()
    return recorder.seen[-1]


CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "own default headers": {"headers": {"user-agent": "mine", "X-Extra": "1", "Accept": "text/plain"}},
    "query parameters": {"params": {"a": "1"}},
    "cookies": {"cookies": {"session": "s1"}},
    "a base URL": {"base_url": "https://elsewhere.example/v1"},
}


@pytest.mark.parametrize("config", list(CONFIGS))
def test_item_4_bedrock_sender_hands_httpx_what_build_request_built(config: str) -> None:
    """Method, URL, headers (names, order, case, values), body and timeout extension: the same as through
    ``build_request``, for each client configuration, on the first request and the next (the URL kept)."""
    recorder = Recorder()
    expected = _through_build_request(recorder, **CONFIGS[config])
    sender = _sender(recorder, **CONFIGS[config])
    _send(sender)
    _send(sender)
    assert recorder.seen[-2] == expected and recorder.seen[-1] == expected


def test_item_4_bedrock_sender_builds_the_request_without_build_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client with nothing of its own to add gets no ``build_request`` call; one with cookies does."""
    recorder = Recorder()
    sender = _sender(recorder)
    built: list[str] = []
    build = httpx.Client.build_request

    def counted(self: httpx.Client, method: str, url: Any, **kwargs: Any) -> httpx.Request:
        built.append(str(url))
        return build(self, method, url, **kwargs)

    monkeypatch.setattr(httpx.Client, "build_request", counted)
    _send(sender)
    _send(sender, "https://bedrock-runtime.eu-west-3.amazonaws.com/model/other/converse-stream")
    assert built == []
    sender.http.cookies.set("session", "s1")
    _send(sender)
    assert built == [URL] and ("Cookie", "session=s1") in [(k.decode(), v.decode()) for k, v in recorder.seen[-1][2]]


def test_item_4_bedrock_cookies_read_only_from_answers_that_set_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """An answer without ``Set-Cookie`` never reaches the jar; one with it does, and its cookie is sent back on
    the next request (with the same headers ``build_request`` gives a client holding that cookie)."""
    extracted: list[str] = []
    extract = CookieJar.extract_cookies

    def counted(self: CookieJar, response: Any, request: Any) -> None:
        extracted.append(request.get_full_url())
        extract(self, response, request)

    monkeypatch.setattr(CookieJar, "extract_cookies", counted)
    recorder = Recorder()
    sender = _sender(recorder)
    _send(sender)
    _send(sender)
    assert extracted == []
    recorder.cookie = "session=s2"
    _send(sender)
    assert extracted == [URL] and dict(sender.http.cookies) == {"session": "s2"}
    recorder.cookie = None
    _send(sender)
    assert recorder.seen[-1] == _through_build_request(Recorder(), cookies={"session": "s2"})


def test_item_4_bedrock_sender_request_headers_replace_the_clients_whatever_their_case() -> None:
    """A request header named like one of the client's in another case replaces it, where the request puts it,
    as ``Headers.update`` does (``HEADERS``' ``User-Agent`` against the client's ``user-agent``)."""
    recorder = Recorder()
    sender = _sender(recorder, headers={"USER-AGENT": "client", "content-type": "text/plain"})
    _send(sender)
    names = [name for name, _ in recorder.seen[-1][2]]
    assert names.count(b"User-Agent") == 1 and b"USER-AGENT" not in names and b"content-type" not in names


def test_item_4_bedrock_lean_stream_reads_a_2xx_answer_without_an_aws_response(monkeypatch: pytest.MonkeyPatch) -> None:
    """The events of a 2xx answer come with no ``AWSResponse`` built; an error status is still boto3's
    ``ClientError``, read from one, its body closed."""
    built: list[int] = []

    class Counted(AWSResponse):  # type: ignore[misc]
        def __init__(self, url: str, status: int, headers: Any, raw: Any) -> None:
            built.append(status)
            super().__init__(url, status, headers, raw)

    monkeypatch.setattr(bedrock_transport, "AWSResponse", Counted)
    answers = [
        httpx.Response(
            200,
            headers={"content-type": "application/vnd.amazon.eventstream"},
            content=b"".join(stream_frames(Reply(text="hello there"))),
        ),
        error := httpx.Response(400, headers={"x-amzn-errortype": "ValidationException"}, json={"message": "bad"}),
    ]
    keys = {"aws_access_key_id": "AKIAIOSFODNN7SENDER00", "aws_secret_access_key": "secret"}
    client = create_client(BedrockSettings(region="eu-west-3", endpoint_url="http://127.0.0.1:9", **keys))
    sender = sender_of(client)
    assert sender is not None
    sender.http = sync_client(httpx, transport=httpx.MockTransport(lambda request: answers.pop(0)))
    lean = bedrock_direct.lean_request(client)
    assert lean is not None
    payload = {"modelId": "m", "messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    events = list(bedrock_hooks._events(bedrock_hooks._open(lean, payload)))
    texts = [event["contentBlockDelta"]["delta"]["text"] for event in events if "contentBlockDelta" in event]
    assert texts == ["hello", " there"] and built == []
    with pytest.raises(ClientError) as raised:
        bedrock_hooks._open(lean, payload)
    assert raised.value.response["Error"]["Code"] == "ValidationException" and built == [400] and error.is_closed
    close_client(client)
