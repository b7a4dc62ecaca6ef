"""Issue 34 item 4: what Bedrock's lean request repeats from one call to the next is worked out once: the URL per
path, the canonical request's method, path and query lines per URL and the signed names per tuple of header names
(``llmplex_bedrock.signing``), and the headers reach httpx as the ASCII bytes it would have encoded (no text made
of them first). The signed request stays botocore's ``SigV4Auth``'s; a value httpx cannot encode fails as before."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from botocore import auth as botocore_auth
from botocore.credentials import ReadOnlyCredentials
from llmplex_bedrock import direct as bedrock_direct
from llmplex_bedrock.clients import close_client, create_client, sender_of
from llmplex_bedrock.direct import _Signed
from llmplex_bedrock.settings import BedrockSettings
from llmplex_bedrock.signing import LeanSigV4Auth, SigningCache

from llmplex.http import sync_client
from tests.plugins.bedrock.conftest import _no_aws_environment  # noqa: F401 (autouse: no real AWS chain)

URL = "http://127.0.0.1:9/model/anthropic.claude%3A0/converse-stream?b=2&a=1"
NOW = datetime.datetime(2026, 12, 3, 17, 0, 0, tzinfo=datetime.UTC)
FROZEN = ReadOnlyCredentials("AKIAIOSFODNN7ONCEPER0", "wJalrXUtnFEMI/K7MDENG/bPxRfiONCEPERCLIENT", "token")
PAYLOAD = {"modelId": "anthropic.claude:0", "messages": [{"role": "user", "content": [{"text": "hi"}]}]}


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botocore_auth, "get_current_datetime", lambda: NOW)


@pytest.fixture
def lean() -> Iterator[bedrock_direct.LeanRequest]:
    settings = BedrockSettings(
        region="eu-west-3", endpoint_url="http://127.0.0.1:9", aws_access_key_id="AKIDONCE", aws_secret_access_key="s"
    )
    client = create_client(settings)
    prepared = bedrock_direct.lean_request(client)
    assert prepared is not None
    yield prepared
    close_client(client)


def _signed(signer: botocore_auth.SigV4Auth, headers: dict[str, Any], params: Any = None) -> dict[str, Any]:
    request = _Signed("POST", URL, dict(headers), b'{"a":1}', {}, params or {})
    signer.add_auth(request)
    return request.headers


@pytest.mark.parametrize("params", [None, {"z": "1"}], ids=["no params", "params"])
def test_item_4_bedrock_signing_plans_names_and_head_once(params: Any) -> None:
    """The canonical request's first lines and the signed names are worked out on the first request and read after;
    every request is signed as botocore signs it (a query in the URL, blacklisted names, whitespace, params)."""
    cache = SigningCache()
    for headers in (
        {"Content-Type": "application/json", "User-Agent": "x", "X-Amzn-Trace-Id": "Root=1"},
        {"Content-Type": " application/json ", "X-Custom": "  a   b\tc  ", "Expect": "100-continue"},
        {"x-dup": "1", "X-Dup": "2"},
    ):
        expected = _signed(botocore_auth.SigV4Auth(FROZEN, "bedrock", "eu-west-3"), headers, params)
        for _ in range(3):
            assert _signed(LeanSigV4Auth(FROZEN, "bedrock", "eu-west-3", cache), headers, params) == expected
    assert (len(cache.heads), len(cache.plans)) == (0 if params else 1, 3)
    alike = [plan for names, plan in cache.plans.items() if "X-Dup" in names]
    assert alike == [None]  # botocore's selection for names alike but for case


def test_item_4_bedrock_url_is_joined_once_per_path(
    lean: bedrock_direct.LeanRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``prepare_request_dict`` joins a path's URL once; the requests built after carry the same URL."""
    joined: list[str] = []
    prepare = bedrock_direct.prepare_request_dict

    def counted(request_dict: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        joined.append(request_dict["url_path"])
        prepare(request_dict, *args, **kwargs)

    monkeypatch.setattr(bedrock_direct, "prepare_request_dict", counted)
    urls = {lean.build(PAYLOAD).url for _ in range(3)}
    assert urls == {"http://127.0.0.1:9/model/anthropic.claude%3A0/converse-stream"}
    assert joined == ["/model/anthropic.claude%3A0/converse-stream"]


def test_item_4_bedrock_headers_reach_httpx_as_bytes(
    lean: bedrock_direct.LeanRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpx is handed botocore's header bytes as they are (ASCII), and gets the request it built from text before;
    a value beyond ASCII still fails as httpx failed on its text."""
    sent: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, content=b"")

    sender = sender_of(lean.client)
    assert sender is not None
    sender.http = sync_client(httpx, transport=httpx.MockTransport(record))
    handed: list[Any] = []
    original = httpx.Request

    def spy(*args: Any, **kwargs: Any) -> httpx.Request:
        handed.append(kwargs.get("headers"))
        return original(*args, **kwargs)

    monkeypatch.setattr(httpx, "Request", spy)
    request = lean.build(PAYLOAD)
    sender.send(request).close()
    assert all(type(name) is bytes and type(value) is bytes for name, value in handed[0])
    from_text = [
        (name, value.decode("latin-1") if type(value) is bytes else value) for name, value in request.headers.items()
    ]
    assert sent[0].headers.raw == sender.http.build_request("POST", request.url, headers=from_text).headers.raw
    request.headers["X-Note"] = "caf\u00e9".encode("latin-1")
    with pytest.raises(UnicodeEncodeError):
        sender.send(request)
