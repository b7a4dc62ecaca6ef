"""Issue 34 item 4: once botocore has derived a URL's host, the lean signer (``llmplex_bedrock.signing``) selects
the headers to sign into a plain dict and writes their canonical lines and ``SignedHeaders=`` list once, without
botocore's ``email``-message selection; the signed request is botocore's ``SigV4Auth``'s, whatever the headers
(whitespace runs, blacklisted names, a session token), and a selection a dict cannot hold as botocore's message
does (two names alike but for case, a value the message would hand back changed) is botocore's own."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from botocore import auth as botocore_auth
from botocore.credentials import ReadOnlyCredentials
from llmplex_bedrock.direct import _Signed
from llmplex_bedrock.signing import LeanSigV4Auth, SigningCache

URL = "https://bedrock-runtime.eu-west-3.amazonaws.com:8443/model/anthropic.claude%3A0/converse-stream"
NOW = datetime.datetime(2026, 12, 3, 11, 0, 0, tzinfo=datetime.UTC)
CREDENTIALS = {
    "no token": ReadOnlyCredentials("AKIAIOSFODNN7CANONIC0", "wJalrXUtnFEMI/K7MDENG/bPxRfiCANONICAL", None),
    "token": ReadOnlyCredentials("AKIAIOSFODNN7CANONIC0", "wJalrXUtnFEMI/K7MDENG/bPxRfiCANONICAL", "tok  en"),
}
HEADERS: dict[str, dict[str, Any]] = {
    "lean request": {"Content-Type": "application/json", "User-Agent": "Boto3/1 md/x llmplex"},
    "whitespace runs": {"Content-Type": " application/json ", "X-Custom": "  a   b\tc  ", "X-Empty": ""},
    "blacklisted names": {"Expect": "100-continue", "X-Amzn-Trace-Id": "Root=1", "Connection": "close", "A": "1"},
    "names alike but for case": {"x-dup": "1", "X-Dup": "2", "Content-Type": "application/json"},
    "a value beyond ASCII": {"X-Note": "caf\u00e9", "Content-Type": "application/json"},
}


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botocore_auth, "get_current_datetime", lambda: NOW)


def _signed(signer: botocore_auth.SigV4Auth, headers: dict[str, Any]) -> dict[str, Any]:
    request = _Signed("POST", URL, dict(headers), b'{"a":1}', {})
    signer.add_auth(request)
    return request.headers


@pytest.mark.parametrize("credentials", list(CREDENTIALS))
@pytest.mark.parametrize("headers", list(HEADERS))
def test_item_4_bedrock_lean_canonical_headers_sign_as_botocore(headers: str, credentials: str) -> None:
    """The first request (host derived by botocore) and the next (selected by the lean signer) carry the
    headers, ``Authorization`` included, botocore's ``SigV4Auth`` gives the same request."""
    frozen = CREDENTIALS[credentials]
    expected = _signed(botocore_auth.SigV4Auth(frozen, "bedrock", "eu-west-3"), HEADERS[headers])
    cache = SigningCache()
    for _ in range(2):
        assert _signed(LeanSigV4Auth(frozen, "bedrock", "eu-west-3", cache), HEADERS[headers]) == expected


def test_item_4_bedrock_lean_selection_is_a_plain_dict_once_the_host_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore selects the first request's headers (its host derived), then none: the lean signer's selection
    is a dict its canonical lines come from, written once per request; the cases a dict cannot hold go to
    botocore's selection again."""
    selections: list[object] = []
    select = botocore_auth.SigV4Auth.headers_to_sign

    def selecting(self: Any, request: Any) -> Any:
        selections.append(request)
        return select(self, request)

    monkeypatch.setattr(botocore_auth.SigV4Auth, "headers_to_sign", selecting)
    frozen, cache = CREDENTIALS["token"], SigningCache()
    for _ in range(3):
        _signed(LeanSigV4Auth(frozen, "bedrock", "eu-west-3", cache), HEADERS["lean request"])
    assert len(selections) == 1
    signer = LeanSigV4Auth(frozen, "bedrock", "eu-west-3", cache)
    request = _Signed("POST", URL, dict(HEADERS["whitespace runs"]), b"{}", {})
    selection = signer.headers_to_sign(request)
    assert type(selection) is dict and selection["host"] == "bedrock-runtime.eu-west-3.amazonaws.com:8443"
    assert signer.canonical_headers(selection) is signer.canonical_headers(selection)
    assert signer.signed_headers(selection) == "content-type;host;x-custom;x-empty"
    for odd in ("names alike but for case", "a value beyond ASCII"):
        _signed(LeanSigV4Auth(frozen, "bedrock", "eu-west-3", cache), HEADERS[odd])
    assert len(selections) == 3
