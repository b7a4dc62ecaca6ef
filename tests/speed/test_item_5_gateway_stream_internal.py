"""Issue 34 item 5 (with 4145b2c's head read): a stream whose gateway step fails is answered with a typed error.

Since the request's own task reads a stream's head, a failure of the gateway's own code on the way (an encoder,
the Responses owners store) reaches ``stream_response`` instead of dying in the producer task, where it had ended
the stream as an empty 200. Such a failure is logged and becomes the gateway's typed 500: its own status and
error body before the first chunk, the API's error event after it; the exception's text (which may hold anything)
is never sent, and the gateway keeps serving.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from llmplex.gateway.apis.openai_chat import ChatStreamEncoder
from llmplex.types import StreamEvent
from tests.gateway.harness import MASTER_KEY, Gateway, gateway_config, running_gateway

AUTH = {"authorization": f"Bearer {MASTER_KEY}"}
STREAM = {"model": "mock:echo", "stream": True, "messages": [{"role": "user", "content": "hello there"}]}
SECRET = "sk-leaked-in-a-bug-0123456789"


@pytest.fixture(scope="module")
def gateway() -> Iterator[Gateway]:
    with running_gateway(gateway_config()) as running:
        yield running


def _failing_encoder(monkeypatch: pytest.MonkeyPatch, fails: Any) -> None:
    encode = ChatStreamEncoder.encode

    def failing(self: ChatStreamEncoder, event: StreamEvent) -> bytes:
        if fails(event):
            raise RuntimeError(f"a bug holding {SECRET}")
        return encode(self, event)

    monkeypatch.setattr(ChatStreamEncoder, "encode", failing)


def _still_serving(gateway: Gateway) -> None:
    reply = httpx.post(gateway.url + "/v1/chat/completions", json={**STREAM, "stream": False}, headers=AUTH)
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "hello there"


def test_item_5_a_gateway_failure_in_a_streams_head_is_a_typed_500(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    gateway.recorder.records.clear()
    _failing_encoder(monkeypatch, lambda event: True)
    reply = httpx.post(gateway.url + "/v1/chat/completions", json=STREAM, headers=AUTH, timeout=30)
    assert reply.status_code == 500, reply.text
    assert reply.headers["content-type"].startswith("application/json")
    error = reply.json()["error"]
    assert error["message"] == "internal gateway error" and SECRET not in reply.text
    record = gateway.recorder.wait_for(lambda r: r.status == 500)
    assert SECRET not in repr(record)
    monkeypatch.undo()
    _still_serving(gateway)


def test_item_5_a_gateway_failure_after_a_streams_head_is_the_error_event(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    gateway.recorder.records.clear()
    _failing_encoder(monkeypatch, lambda event: event.type == "response")
    with httpx.stream("POST", gateway.url + "/v1/chat/completions", json=STREAM, headers=AUTH, timeout=30) as reply:
        assert reply.status_code == 200
        body = reply.read().decode()
    events = [line.removeprefix("data: ") for line in body.splitlines() if line.startswith("data: ")]
    assert json.loads(events[0])["choices"][0]["delta"].get("role") == "assistant"  # the head went out
    assert any("internal gateway error" in event for event in events), body
    assert SECRET not in body
    record = gateway.recorder.wait_for(lambda r: r.error_type is not None)
    assert SECRET not in repr(record)
    monkeypatch.undo()
    _still_serving(gateway)
