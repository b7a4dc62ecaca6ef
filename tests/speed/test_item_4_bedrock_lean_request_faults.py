"""Issue 34 item 4: Bedrock's lean ConverseStream request (``llmplex_bedrock.direct``/``aio``) under hostile
servers and in the cases it must leave to boto3. Deadlines (a trickle, a stall mid-frame, silence after the
headers) end the call as ``LLMDeadlineExceededError`` sync and async; a cancelled async read closes the answer;
a user's event handler, a bearer token, credentials due for a refresh or a client built elsewhere send through
boto3's own pipeline, which still streams."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.credentials import RefreshableCredentials
from botocore.exceptions import InvalidEndpointConfigurationError
from llmplex_bedrock import aio as bedrock_aio
from llmplex_bedrock import direct as bedrock_direct
from llmplex_bedrock import hooks as bedrock_hooks
from llmplex_bedrock.clients import close_client, create_client
from llmplex_bedrock.settings import BedrockSettings

import llmplex
from llmplex import Deadline, LLMDeadlineExceededError
from llmplex.testing import Reply as Said
from tests.plugins.bedrock.conftest import _no_aws_environment  # noqa: F401 (autouse: no real AWS chain)
from tests.plugins.bedrock.wire import event_frame, stream_frames
from tests.support.stream_server import Reply, StreamServer

KEY_ID = "AKIAIOSFODNN7LEANFAULT"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiLEANFAULTS0"
HAIKU = "anthropic.claude-3-5-haiku-20241022-v1:0"
EVENTSTREAM = "application/vnd.amazon.eventstream"
PAYLOAD = {"modelId": HAIKU, "messages": [{"role": "user", "content": [{"text": "hi"}]}]}
BODY = b"".join(stream_frames(Said("one two three four")))
START = event_frame("messageStart", {"role": "assistant"})
HI = event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}})

opened: list[str] = []


@pytest.fixture(autouse=True)
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records each lean opening (``sync``/``async``) and each boto3 opening (``boto3``)."""
    opened.clear()
    lean_open, lean_aopen, boto3_open = bedrock_hooks._open, bedrock_hooks.aopen, bedrock_hooks.lean_request

    def sync_open(*args: Any) -> Any:
        opened.append("sync")
        return lean_open(*args)

    async def async_open(*args: Any) -> Any:
        opened.append("async")
        return await lean_aopen(*args)

    def decided(client: Any) -> Any:
        lean = boto3_open(client)
        if lean is None:
            opened.append("boto3")
        return lean

    monkeypatch.setattr(bedrock_hooks, "_open", sync_open)
    monkeypatch.setattr(bedrock_hooks, "aopen", async_open)
    monkeypatch.setattr(bedrock_hooks, "lean_request", decided)
    return opened


def _config(url: str) -> dict[str, Any]:
    keys = {"aws_access_key_id": KEY_ID, "aws_secret_access_key": SECRET}
    return {"providers": {"bedrock": {"endpoint_url": url, "region": "eu-west-3", **keys}}}


def _outcome(url: str, mode: str, deadline: float) -> tuple[str, Any]:
    """One stream through llmplex after a warm one (client and connection built outside the deadline)."""
    client = llmplex.Client(_config(url), throttle={"max_attempts": 1})
    seen: list[str] = []

    async def read() -> None:
        async for event in client.astream(f"bedrock:{HAIKU}", "hi"):  # warms this loop's aiohttp client
            assert event
        async for event in client.astream(f"bedrock:{HAIKU}", "hi", deadline=Deadline.after(deadline)):
            seen.append(event.text or "")

    try:
        if mode == "stream":
            list(client.stream(f"bedrock:{HAIKU}", "hi"))
            for event in client.stream(f"bedrock:{HAIKU}", "hi", deadline=Deadline.after(deadline)):
                seen.append(event.text or "")
        else:
            asyncio.run(read())
    except LLMDeadlineExceededError as error:
        return "deadline", ("".join(seen), type(error))
    finally:
        client.close()
    return "ok", "".join(seen)


HOSTILE = {
    "trickle": Reply(200, (BODY,), EVENTSTREAM, interval=0.05),
    "stall mid-frame": Reply(200, (START + HI + HI[:20],), EVENTSTREAM, ending="stall"),
    "silence after the headers": Reply(200, (), EVENTSTREAM, ending="stall"),
}


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_item_4_bedrock_lean_request_ends_at_the_deadline(name: str, mode: str) -> None:
    """A byte every 50 ms (the whole stream takes about 25 s), a stall inside a frame, nothing after the headers:
    each ends at the call's 0.6 s deadline as ``LLMDeadlineExceededError``, with what arrived before it."""
    with StreamServer() as server:
        server.script(Reply(200, (BODY,), EVENTSTREAM), HOSTILE[name])
        outcome = _outcome(server.url, mode, 0.6)
    assert outcome[0] == "deadline", outcome
    assert outcome[1][0] == ("Hi" if name == "stall mid-frame" else outcome[1][0])
    assert opened == ["sync", "sync"] if mode == "stream" else ["async", "async"]


def test_item_4_bedrock_lean_async_read_cancelled_midway_closes_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A task cancelled while it waits for the next frame: the cancellation propagates and the answer is closed
    (its aiohttp connection is not left reading)."""
    closed: list[bool] = []
    lean_aopen = bedrock_aio.aopen

    async def watched(*args: Any) -> Any:
        answer = await lean_aopen(*args)

        async def aclose() -> None:
            await answer.aclose()
            closed.append(True)

        return bedrock_aio.Opened(answer.chunks, aclose)

    monkeypatch.setattr(bedrock_hooks, "aopen", watched)
    with StreamServer() as server:
        server.script(Reply(200, (START + HI,), EVENTSTREAM, ending="stall"))
        client = llmplex.Client(_config(server.url), throttle={"max_attempts": 1})
        first = asyncio.Event()

        async def read() -> None:
            async for event in client.astream(f"bedrock:{HAIKU}", "hi"):
                if event.text:
                    first.set()

        async def main() -> None:
            task = asyncio.create_task(read())
            await asyncio.wait_for(first.wait(), 10)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        try:
            asyncio.run(main())
        finally:
            client.close()
    assert closed == [True]


def _stream_text(client: Any, url: str, mode: str) -> str:
    settings = BedrockSettings(endpoint_url=url, region="eu-west-3")

    def texts(events: Iterator[Any]) -> str:
        return "".join(e["contentBlockDelta"]["delta"]["text"] for e in events if "contentBlockDelta" in e)

    if mode == "stream":
        return texts(bedrock_hooks.llmplex_stream(PAYLOAD, settings, client, None))

    async def read() -> str:
        events = await bedrock_hooks.llmplex_astream(PAYLOAD, settings, client, None)
        return texts(iter([e async for e in events]))

    return asyncio.run(read())


def _ours(url: str) -> Any:
    return create_client(BedrockSettings(endpoint_url=url, region="eu-west-3", aws_access_key_id=KEY_ID,
                                         aws_secret_access_key=SECRET))  # fmt: skip


def _user_hook(client: Any) -> list[str]:
    calls: list[str] = []
    client.meta.events.register("before-call.bedrock-runtime.ConverseStream", lambda **_: calls.append("hook"))
    return calls


def _refresh_due(client: Any) -> list[str]:
    calls: list[str] = []

    def refresh() -> dict[str, str]:
        calls.append("refreshed")
        later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)
        return {"access_key": KEY_ID, "secret_key": SECRET, "token": "fresh", "expiry_time": later.isoformat()}

    past = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=1)
    credentials = RefreshableCredentials(KEY_ID, SECRET, "stale", past, refresh, "test")
    client._request_signer._credentials = credentials
    return calls


@pytest.mark.parametrize("mode", ["stream", "astream"])
@pytest.mark.parametrize("case", ["a user's handler", "a bearer token", "credentials due for a refresh", "not ours"])
def test_item_4_bedrock_what_the_lean_request_cannot_reproduce_goes_through_boto3(
    case: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StreamServer() as server:
        server.script(Reply(200, (BODY,), EVENTSTREAM))
        if case == "a bearer token":  # boto3 then signs with it instead of SigV4
            monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bearer-token-for-test")
        client = _ours(server.url)
        calls: list[str] = []
        if case == "a user's handler":
            calls = _user_hook(client)
        elif case == "credentials due for a refresh":
            calls = _refresh_due(client)
        elif case == "not ours":
            config = Config(retries={"total_max_attempts": 1})
            client = boto3.client("bedrock-runtime", region_name="eu-west-3", endpoint_url=server.url,
                                  aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET, config=config)  # fmt: skip
        assert bedrock_direct.lean_request(client) is None
        if case == "a bearer token":  # boto3 chose bearer auth, which it sends over HTTPS only: nothing was sent
            with pytest.raises(InvalidEndpointConfigurationError, match="Bearer authorization requires an HTTPS"):
                _stream_text(client, server.url, mode)
            assert not server.requests
        else:
            assert _stream_text(client, server.url, mode) == "one two three four"
            assert dict(server.requests[-1].headers)["authorization"].startswith(
                f"AWS4-HMAC-SHA256 Credential={KEY_ID}/"
            )
    assert opened == ([] if case == "not ours" else ["boto3"])  # a client built elsewhere is never even prepared
    assert calls == {"a user's handler": ["hook"], "credentials due for a refresh": ["refreshed"]}.get(case, [])


def test_item_4_bedrock_a_bearer_token_set_later_leaves_the_call_to_boto3(monkeypatch: pytest.MonkeyPatch) -> None:
    """boto3 looks for the token on every call: one set after the client was prepared is boto3's to use."""
    client = _ours("http://127.0.0.1:9")
    assert bedrock_direct.lean_request(client) is not None
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bearer-token-for-test")
    assert bedrock_direct.lean_request(client) is None
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK")
    assert bedrock_direct.lean_request(client) is not None
    close_client(client)


def test_item_4_bedrock_a_handler_registered_then_removed_still_leaves_boto3_in_charge() -> None:
    """botocore replaces its handler lookups on every (un)registration: the lean request is then boto3's no more
    (it cannot tell what else changed), and boto3 sends."""
    client = _ours("http://127.0.0.1:9")
    assert bedrock_direct.lean_request(client) is not None

    def hook(**_: Any) -> None:
        pass

    client.meta.events.register("before-send.bedrock-runtime", hook)
    client.meta.events.unregister("before-send.bedrock-runtime", hook)
    assert bedrock_direct.lean_request(client) is None
    close_client(client)


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_item_4_bedrock_lean_request_reads_a_huge_delta_whole(mode: str) -> None:
    """A 4 MB text delta between two small ones arrives whole on the lean path, sync and async."""
    huge = event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "x" * 4_000_000}})
    body = START + HI + huge + HI + event_frame("messageStop", {"stopReason": "end_turn"})
    with StreamServer() as server:
        server.script(Reply(200, (body[:1000], body[1000:]), EVENTSTREAM))
        client = llmplex.Client(_config(server.url), throttle={"max_attempts": 1})

        async def read() -> str:
            return "".join([e.text or "" async for e in client.astream(f"bedrock:{HAIKU}", "hi")])

        try:
            if mode == "stream":
                text = "".join(e.text or "" for e in client.stream(f"bedrock:{HAIKU}", "hi"))
            else:
                text = asyncio.run(read())
        finally:
            client.close()
    assert text == "Hi" + "x" * 4_000_000 + "Hi"
    assert opened == ["sync" if mode == "stream" else "async"]
