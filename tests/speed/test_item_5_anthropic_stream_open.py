"""Issue 34 item 5: llmplex-anthropic opens an async lean stream with its client's own work done once, as
``asend`` posts a whole answer (and as llmplex-openai's ``astream`` does). Sent straight on the aiohttp session, a
stream given no timeout of its own hands on the same headers tuple and the same httpx timeouts on every stream (no
header list and no ``Timeout(...).as_dict()`` a stream, so ``llmplex.http.direct``'s sender tells a client's repeat
by identity), and sends what it sent before: the SDK's streamed-call headers. A stream with a timeout of its own
still announces and keeps it, without changing the next stream's; a failure to connect is still the SDK's error.
The sync stream (and the sync call) builds its httpx request from the same worked-out headers."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest
from llmplex_anthropic import lean

import llmplex
from tests.plugins.anthropic.wire import message, stream_body, text_block
from tests.speed.direct_opens import astreams, spy_opens
from tests.support.stream_server import Reply, StreamServer

_BODY = stream_body([{"text": ["Hello"]}])


def _llm(root: str) -> llmplex.Client:
    provider = {"plugin": "anthropic", "base_url": root, "api_key": "sk-ant-stream-open-0a1b2c3d"}
    return llmplex.Client(providers={"p": provider}, throttle={"max_attempts": 1})


def _timing(headers: tuple[tuple[str, str], ...]) -> tuple[str | None, str | None]:
    sent = dict(headers)
    return sent.get("x-stainless-timeout"), sent.get("x-stainless-read-timeout")


def test_item_5_anthropic_async_stream_hands_on_its_clients_headers_and_timeouts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened = spy_opens(monkeypatch)
    with StreamServer() as server:
        server.script(*[Reply.events(_BODY)] * 3)
        texts = astreams(_llm(server.url), [None, None, None])
        sent = [request.headers for request in server.requests]
    assert texts == ["Hello"] * 3
    assert len(opened) == 3
    assert opened[0][0] is opened[1][0] is opened[2][0]
    assert opened[0][1] is opened[1][1] is opened[2][1]
    assert sent[0] == sent[1] == sent[2]
    # what the SDK sends for a streamed call given no timeout: its NOT_GIVEN, and its default read timeout (10 min)
    assert _timing(sent[0]) == (str(anthropic.NOT_GIVEN), "600")
    assert opened[0][1] == {"connect": 5.0, "read": 600.0, "write": 600.0, "pool": 600.0}


def test_item_5_anthropic_async_stream_with_a_timeout_sends_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = spy_opens(monkeypatch)
    with StreamServer() as server:
        server.script(*[Reply.events(_BODY)] * 3)
        texts = astreams(_llm(server.url), [None, 30, None])
        first, own, third = (_timing(request.headers) for request in server.requests)
    assert texts == ["Hello"] * 3
    assert own[0] == own[1] and 0 < float(own[1] or 0) <= 30 and first == third != own
    assert set(opened[1][1].values()) == {float(own[1] or 0)}  # the call's time left, as it announced
    assert opened[0][0] is opened[2][0] and opened[0][1] is opened[2][1]


def test_item_5_anthropic_async_stream_that_cannot_connect_is_the_sdks_error() -> None:
    with StreamServer() as server:
        url = server.url

    with pytest.raises(llmplex.LLMError) as failed:
        astreams(_llm(url), [None])
    cause = failed.value.__cause__
    assert isinstance(cause, anthropic.APIConnectionError)
    assert str(cause.request.url) == f"{url}/v1/messages"
    assert cause.request.headers["x-stainless-timeout"] == str(anthropic.NOT_GIVEN)


@pytest.mark.parametrize("streamed", [True, False])
def test_item_5_anthropic_sync_requests_are_built_from_the_clients_headers(
    streamed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given no timeout, every sync stream (every sync call of a model and ``max_tokens``) builds its request from
    the same headers, worked out once; the request sent is the same."""
    built: list[Any] = []
    build = lean.LeanMessages._build

    def spy(self: lean.LeanMessages, body: bytes, headers: Any, chosen: Any) -> Any:
        built.append(headers)
        return build(self, body, headers, chosen)

    monkeypatch.setattr(lean.LeanMessages, "_build", spy)
    with StreamServer() as server:
        answer = (
            Reply.events(_BODY) if streamed else Reply.json(200, json.dumps(message([text_block("Hello")])).encode())
        )
        server.script(answer, answer)
        llm = _llm(server.url)
        try:
            texts = [
                "".join(e.text or "" for e in llm.stream("p:m", "hi")) if streamed else llm.complete("p:m", "hi").text
                for _ in range(2)
            ]
        finally:
            llm.close()
        first, second = server.requests
    assert texts == ["Hello", "Hello"]
    assert len(built) == 2 and built[0] is built[1]
    assert first.headers == second.headers and first.body == second.body
