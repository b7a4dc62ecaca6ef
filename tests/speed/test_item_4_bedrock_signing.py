"""Issue 34 item 4: the lean ConverseStream request is signed with what does not change between calls kept
(``llmplex_bedrock.signing``: the SigV4 signing key per secret and day, the canonical path per model, the headers
to sign selected once), and what it sends stays boto3's request byte for byte at the transport (a fixed clock and
uuid) across a change of day, of credentials and of session token: a kept key never outlives either. Credentials
due for a refresh still go through boto3, which refreshes them; the lean request signs with the new ones after."""

from __future__ import annotations

import datetime
import gc
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from botocore import auth as botocore_auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials, ReadOnlyCredentials, RefreshableCredentials
from botocore.useragent import register_feature_id
from llmplex_bedrock import direct as bedrock_direct
from llmplex_bedrock import hooks as bedrock_hooks
from llmplex_bedrock import signing as bedrock_signing
from llmplex_bedrock.clients import close_client, create_client, sender_of
from llmplex_bedrock.settings import BedrockSettings

from llmplex.http import sync_client
from tests.plugins.bedrock.conftest import _no_aws_environment  # noqa: F401 (autouse: no real AWS chain)

KEY_ID = "AKIAIOSFODNN7SIGNING0"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiSIGNINGKEY01"
OTHER_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiSIGNINGKEY02"
TOKEN = "session-token-signing-1"
HAIKU = "anthropic.claude-3-5-haiku-20241022-v1:0"
SONNET = "arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.anthropic.claude v2/é"
DAY = datetime.datetime(2026, 12, 2, 23, 59, 59, tzinfo=datetime.UTC)


def _payload(model: str = HAIKU) -> dict[str, Any]:
    return {"modelId": model, "messages": [{"role": "user", "content": [{"text": "hi"}]}]}


Sent = tuple[str, str, list[tuple[bytes, bytes]], bytes]


class Wire:
    """One client whose sender records what it hands httpx, boto3's path and the lean one side by side."""

    def __init__(self, token: str | None = TOKEN) -> None:
        self.sent: list[Sent] = []
        keys = {"aws_access_key_id": KEY_ID, "aws_secret_access_key": SECRET, "aws_session_token": token}
        self.client = create_client(BedrockSettings(region="eu-west-3", endpoint_url="http://127.0.0.1:9", **keys))
        sender = sender_of(self.client)
        assert sender is not None
        sender.http = sync_client(httpx, transport=httpx.MockTransport(self._record))

    def _record(self, request: httpx.Request) -> httpx.Response:
        self.sent.append((request.method, str(request.url), list(request.headers.raw), request.read()))
        return httpx.Response(200, headers={"content-type": "application/vnd.amazon.eventstream"}, content=b"")

    def boto3s(self, payload: dict[str, Any]) -> Sent:
        self.client.converse_stream(**payload)
        return self.sent[-1]

    def leans(self, payload: dict[str, Any]) -> Sent:
        lean = bedrock_direct.lean_request(self.client)
        assert lean is not None
        bedrock_hooks._open(lean, payload).close()
        return self.sent[-1]

    def same(self, payload: dict[str, Any] | None = None) -> Sent:
        """What boto3 sends now, after checking the lean request sends exactly that (twice: a kept key reused)."""
        payload = payload or _payload()
        expected = self.boto3s(payload)
        assert self.leans(payload) == expected
        assert self.leans(payload) == expected
        return expected


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[datetime.datetime]:
    """botocore's signing clock (moved by the test) and a fixed invocation id, for both paths."""
    now = [DAY]
    monkeypatch.setattr(botocore_auth, "get_current_datetime", lambda: now[0])
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=34))
    return now


@pytest.fixture
def derived(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Each signing key the lean signer derives: (secret, day)."""
    keys: list[tuple[str, str]] = []
    derive = bedrock_signing.LeanSigV4Auth._signing_key

    def counted(self: bedrock_signing.LeanSigV4Auth, secret: str, day: str) -> bytes:
        keys.append((secret, day))
        return derive(self, secret, day)

    monkeypatch.setattr(bedrock_signing.LeanSigV4Auth, "_signing_key", counted)
    return keys


def _signature(sent: Sent) -> bytes:
    return dict(sent[2])[b"Authorization"].rsplit(b"Signature=", 1)[1]


def test_item_4_bedrock_signing_key_kept_per_secret_and_day(
    clock: list[datetime.datetime], derived: list[tuple[str, str]]
) -> None:
    """One key per secret and day: kept across calls, derived anew at midnight and for other credentials (and
    again on going back to the first ones); every request is boto3's, signature included."""
    wire = Wire()
    first = wire.same()
    assert derived == [(SECRET, "20261202")]
    clock[0] = DAY + datetime.timedelta(seconds=1)
    next_day = wire.same()
    assert dict(next_day[2])[b"X-Amz-Date"] == b"20261203T000000Z" and _signature(next_day) != _signature(first)
    assert derived == [(SECRET, "20261202"), (SECRET, "20261203")]
    wire.client._request_signer._credentials = Credentials(KEY_ID, OTHER_SECRET, TOKEN)
    rotated = wire.same()
    assert _signature(rotated) != _signature(next_day)
    wire.client._request_signer._credentials = Credentials(KEY_ID, SECRET, TOKEN)
    assert wire.same() == next_day
    assert derived[2:] == [(OTHER_SECRET, "20261203"), (SECRET, "20261203")]
    kept = _cache_keys()
    assert kept and all(SECRET not in repr(key) and OTHER_SECRET not in repr(key) for key in kept)  # its hash only
    close_client(wire.client)


def _cache_keys() -> list[Any]:
    """The key every signing cache alive keeps, with what it was derived from."""
    return [o.key for o in gc.get_objects() if isinstance(o, bedrock_signing.SigningCache) and o.key is not None]


@pytest.mark.parametrize("token", [TOKEN, None], ids=["session token", "no token"])
def test_item_4_bedrock_session_token_change_is_boto3s(
    token: str | None, clock: list[datetime.datetime], derived: list[tuple[str, str]]
) -> None:
    """A new session token with the same secret: sent and signed as boto3 does (the key, which the token is no
    part of, kept); a token dropped or added changes the headers as boto3 changes them."""
    wire = Wire(token)
    before = wire.same()
    wire.client._request_signer._credentials = Credentials(KEY_ID, SECRET, "session-token-signing-2")
    after = wire.same()
    assert dict(after[2])[b"X-Amz-Security-Token"] == b"session-token-signing-2"
    assert (b"X-Amz-Security-Token" in dict(before[2])) == (token is not None)
    assert _signature(after) != _signature(before)
    wire.client._request_signer._credentials = Credentials(KEY_ID, SECRET, None)
    assert b"X-Amz-Security-Token" not in dict(wire.same()[2])
    assert derived == [(SECRET, "20261202")]
    close_client(wire.client)


def test_item_4_bedrock_expiring_credentials_go_through_boto3(
    clock: list[datetime.datetime], derived: list[tuple[str, str]]
) -> None:
    """Credentials due for a refresh: no lean request (boto3 refreshes them as it signs); once refreshed, the
    lean request signs with the new ones, boto3's bytes, a key derived for the new secret."""
    wire = Wire()
    now = [datetime.datetime(2026, 12, 2, 12, 0, tzinfo=datetime.UTC)]
    refreshed: list[str] = []

    def refresh() -> dict[str, str]:
        refreshed.append("refresh")
        expiry = now[0] + datetime.timedelta(hours=1)
        return {"access_key": KEY_ID, "secret_key": OTHER_SECRET, "token": "tok-2", "expiry_time": expiry.isoformat()}

    wire.client._request_signer._credentials = RefreshableCredentials(
        KEY_ID, SECRET, TOKEN, now[0] + datetime.timedelta(hours=1), refresh, "test", time_fetcher=lambda: now[0]
    )
    wire.same()
    assert refreshed == [] and derived == [(SECRET, "20261202")]
    now[0] += datetime.timedelta(minutes=55)  # 5 minutes left: inside botocore's refresh windows
    assert bedrock_direct.lean_request(wire.client) is None
    sent = wire.boto3s(_payload())
    assert refreshed == ["refresh"] and dict(sent[2])[b"X-Amz-Security-Token"] == b"tok-2"
    assert wire.leans(_payload()) == sent
    assert derived == [(SECRET, "20261202"), (OTHER_SECRET, "20261202")]
    close_client(wire.client)


def test_item_4_bedrock_headers_selected_once_and_paths_kept(
    monkeypatch: pytest.MonkeyPatch, clock: list[datetime.datetime]
) -> None:
    """The headers to sign are selected once per request (botocore's ``add_auth`` asks twice), by botocore only
    for a URL whose host it has not derived yet (then into a plain dict), each model's canonical path normalized
    once and each URL's host derived once; full caches start again; no ``AWSRequest`` is prepared (its ``body``
    prepared the whole request for the signer to hash it); the requests stay boto3's."""
    selections: list[object] = []
    ours: list[object] = []
    own: Callable[..., Any] = bedrock_signing.LeanSigV4Auth._select
    normalized: list[str] = []
    hosts: list[str] = []
    prepared: list[object] = []
    select: Callable[..., Any] = botocore_auth.SigV4Auth.headers_to_sign
    normalize: Callable[[str], str] = botocore_auth.normalize_url_path
    host: Callable[[str], str] = botocore_auth._host_from_url  # type: ignore[attr-defined]
    prepare: Callable[..., Any] = AWSRequest.prepare

    def selecting(self: Any, request: Any) -> Any:
        selections.append(request)
        return select(self, request)

    def normalizing(path: str) -> str:
        normalized.append(path)
        return normalize(path)

    monkeypatch.setattr(botocore_auth.SigV4Auth, "headers_to_sign", selecting)
    monkeypatch.setattr(
        bedrock_signing.LeanSigV4Auth, "_select", lambda self, request: ours.append(request) or own(self, request)
    )
    monkeypatch.setattr(botocore_auth, "normalize_url_path", normalizing)
    monkeypatch.setattr(botocore_auth, "_host_from_url", lambda url: hosts.append(url) or host(url))
    monkeypatch.setattr(AWSRequest, "prepare", lambda self: prepared.append(self) or prepare(self))
    wire = Wire()
    lean = bedrock_direct.lean_request(wire.client)
    assert lean is not None
    for _ in range(3):
        lean.build(_payload())
    assert len(ours) == 3 and len(set(map(id, ours))) == 3 and selections == ours[:1]
    url_path = f"/model/{HAIKU.replace(':', '%3A')}/converse-stream"
    assert normalized == [url_path] and hosts == [f"http://127.0.0.1:9{url_path}"] and prepared == []
    monkeypatch.setattr(bedrock_signing.SigningCache, "PATHS", 2)
    for model in (SONNET, "m3", HAIKU):
        wire.same(_payload(model))
    assert len(lean.signing_cache.paths) <= 2 and len(lean.signing_cache.hosts) <= 2 and prepared != []
    close_client(wire.client)


class _Registering(Credentials):  # type: ignore[misc]
    """Credentials that register a user-agent feature when frozen, as botocore's providers do when they load."""

    def get_frozen_credentials(self) -> ReadOnlyCredentials:
        register_feature_id("CREDENTIALS_PROFILE")
        frozen: ReadOnlyCredentials = super().get_frozen_credentials()
        return frozen


def test_item_4_bedrock_user_agent_gains_features_registered_while_signing(clock: list[datetime.datetime]) -> None:
    """The User-Agent is built once a call unless a feature is registered while signing: then it is rebuilt
    after signing with it, as boto3 rebuilds it."""
    wire = Wire()
    plain = dict(wire.same()[2])[b"User-Agent"]
    wire.client._request_signer._credentials = _Registering(KEY_ID, SECRET, TOKEN)
    marked = dict(wire.same()[2])[b"User-Agent"]
    assert marked != plain and b"n" in marked.split(b" m/", 1)[1].split(b" ", 1)[0].split(b",")
    close_client(wire.client)


def test_item_4_bedrock_huge_body_is_boto3s(clock: list[datetime.datetime]) -> None:
    """An 8 MB document (about 11 MB of JSON once base64-encoded): hashed from the serialized bytes as they are,
    the same body, Content-Length and signature as boto3's."""
    wire = Wire()
    document = {"format": "txt", "name": "big", "source": {"bytes": b"\x00\xff" * (4 * 1024 * 1024)}}
    payload = {"modelId": HAIKU, "messages": [{"role": "user", "content": [{"document": document}]}]}
    sent = wire.same(payload)
    assert int(dict(sent[2])[b"Content-Length"]) == len(sent[3]) > 11_000_000
    close_client(wire.client)
