"""Issue 34 item 4: Bedrock's lean sync stream hands the call's timeout to its sender as an argument
(``HttpxSender.post``), without entering ``call_timeout`` (a context manager and a context variable set and reset
per call, kept for the sender botocore's own pipeline calls). Each request still carries the deadline's remaining
seconds capped by the instance's ``timeout`` (the sender's default when neither is set) on every phase, and a stream
through boto3's pipeline still sends with the timeout ``call_timeout`` sets."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from llmplex_bedrock import hooks as bedrock_hooks
from llmplex_bedrock.clients import DEFAULT_READ_TIMEOUT, close_client, create_client, sender_of
from llmplex_bedrock.settings import BedrockSettings
from llmplex_bedrock.transport import call_timeout

from llmplex.http import sync_client
from llmplex.testing import Reply
from tests.plugins.bedrock.conftest import _no_aws_environment  # noqa: F401 (autouse: no real AWS chain)
from tests.plugins.bedrock.wire import stream_frames

PAYLOAD = {
    "modelId": "anthropic.claude-3-5-haiku-20241022-v1:0",
    "messages": [{"role": "user", "content": [{"text": "hi"}]}],
}
BODY = b"".join(stream_frames(Reply(text="hello there")))


def _texts(
    settings: BedrockSettings, timeout: float | None, *, lean: bool = True
) -> tuple[list[str], list[dict[str, Any]]]:
    """The texts of one stream through ``llmplex_stream`` and the timeout extension of each request it sent."""
    seen: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(dict(request.extensions["timeout"]))
        return httpx.Response(200, headers={"content-type": "application/vnd.amazon.eventstream"}, content=BODY)

    client = create_client(settings)
    try:
        sender = sender_of(client)
        assert sender is not None
        sender.http.close()
        sender.http = sync_client(httpx, transport=httpx.MockTransport(answer))
        if not lean:
            client.meta.events.register("before-call.bedrock-runtime", lambda **_: None)  # boto3's pipeline then
        events = bedrock_hooks.llmplex_stream(PAYLOAD, settings, client, timeout)
        texts = [event["contentBlockDelta"]["delta"]["text"] for event in events if "contentBlockDelta" in event]
    finally:
        close_client(client)
    return texts, seen


def _settings(timeout: float | None) -> BedrockSettings:
    keys = {"aws_access_key_id": "AKIDSTREAMTIMEOUT", "aws_secret_access_key": "s"}
    return BedrockSettings(region="eu-west-3", endpoint_url="http://127.0.0.1:9", timeout=timeout, **keys)


@pytest.fixture
def entered(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """Each ``call_timeout`` the hooks enter, by its seconds."""
    seconds: list[float | None] = []

    @contextlib.contextmanager
    def counted(value: float | None) -> Iterator[None]:
        seconds.append(value)
        with call_timeout(value):
            yield

    monkeypatch.setattr(bedrock_hooks, "call_timeout", counted)
    return seconds


@pytest.mark.parametrize(
    ("timeout", "instance", "expected"),
    [(None, None, DEFAULT_READ_TIMEOUT), (5.0, None, 5.0), (None, 7.0, 7.0), (5.0, 7.0, 5.0), (9.0, 7.0, 7.0)],
)
def test_item_4_bedrock_lean_stream_passes_its_timeout(
    entered: list[float | None], timeout: float | None, instance: float | None, expected: float
) -> None:
    """The lean stream enters no ``call_timeout``; its request's every phase gets the call's timeout, capped by the
    instance's, or the default."""
    texts, seen = _texts(_settings(instance), timeout)
    assert texts == ["hello", " there"] and entered == []
    assert seen == [{"connect": expected, "read": expected, "write": expected, "pool": expected}]


def test_item_4_bedrock_boto3_stream_still_sends_with_call_timeout(entered: list[float | None]) -> None:
    """A stream through boto3's pipeline (a user's handler registered) sends with the timeout ``call_timeout``
    sets."""
    texts, seen = _texts(_settings(7.0), 5.0, lean=False)
    assert texts == ["hello", " there"] and entered == [5.0]
    assert seen == [{"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0}]
