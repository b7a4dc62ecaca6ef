"""Issue 34 item 5: a Gemini stream the client cuts mid-way is charged the usage Gemini reported so far.

Gemini repeats its usage so far on every chunk; core keeps the latest without an event (``StreamState.usage_so_far``,
fcc7e6b) and hands it on only with the finish. A client that leaves before the finish used to be charged the
gateway's estimate (the prompt's characters over 4, the output streamed so far): its row now holds the counts the
provider reported, not marked as an estimate. A stream that reported nothing is still estimated, and so is one whose
usage so far cannot be read, is impossible (negative counts) or absurd (more than ``MOST_TOKENS``): never 0, never
a request without its row.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator
from typing import Any, cast

import httpx
import pytest

import llmplex
from llmplex.engine.fallback import Call
from llmplex.gateway.exchange import ESTIMATED
from llmplex.gateway.records import RequestRecord
from llmplex.types import Usage
from tests.gateway.harness import MASTER_KEY, Gateway, gateway_config, running_gateway
from tests.plugins.gemini.wire import response, stream_body, text_part, usage
from tests.support.stream_server import Reply, StreamServer

MODEL = "g:gemini-2.5-flash"
PROMPT = "Tell me a long story about a lighthouse keeper. " * 80  # an estimate of about 960 input tokens
KEY = "AIzaSyGATEWAYCUT_0123456789abcdefghijk"


@pytest.fixture(scope="module")
def server() -> Iterator[StreamServer]:
    with StreamServer() as running:
        yield running


@pytest.fixture(scope="module")
def gateway(server: StreamServer) -> Iterator[Gateway]:
    providers = {"g": {"plugin": "gemini", "base_url": server.url, "api_key": KEY}}
    config = gateway_config(providers=providers, gateway={"models": [MODEL]})
    with running_gateway(config) as running:
        yield running


def _cut(gateway: Gateway, server: StreamServer, chunks: list[dict[str, Any]], seen: bytes) -> RequestRecord:
    """Stream ``chunks`` (then silence), read until ``seen`` arrived, leave; the record the gateway made."""
    server.script(Reply.events(stream_body(chunks), ending="stall"))
    before = len(gateway.recorder.records)
    body = {"model": MODEL, "messages": [{"role": "user", "content": PROMPT}], "stream": True}
    headers = {"authorization": f"Bearer {MASTER_KEY}"}
    url = gateway.url + "/v1/chat/completions"
    with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as answer:
        assert answer.status_code == 200
        read = b""
        for piece in answer.iter_raw():
            read += piece
            if seen in read:
                break
    gateway.recorder.wait_count(before + 1)
    return gateway.recorder.records[before]


def test_item_5_a_gemini_stream_cut_by_the_client_is_charged_its_reported_usage(
    gateway: Gateway, server: StreamServer
) -> None:
    chunks = [
        response([text_part("Once")], finish_reason=None, usage_metadata=usage(4200, 1)),
        response([text_part(" upon")], finish_reason=None, usage_metadata=usage(4200, 3, thoughts=5)),
    ]
    record = _cut(gateway, server, chunks, b"upon")
    assert record.error_type == "client_disconnected"
    assert record.usage is not None and not record.usage_estimated
    assert (record.usage.input_tokens, record.usage.output_tokens, record.usage.reasoning_tokens) == (4200, 8, 5)
    assert record.cost_usd is not None and record.cost_usd > 0
    assert record.cost_note is None or not record.cost_note.startswith(ESTIMATED)


def test_item_5_a_gemini_stream_cut_before_any_usage_is_still_estimated(gateway: Gateway, server: StreamServer) -> None:
    record = _cut(gateway, server, [response([text_part("Once upon")], finish_reason=None)], b"upon")
    assert record.error_type == "client_disconnected" and record.usage is not None and record.usage_estimated
    assert record.usage.input_tokens > 900 and record.usage.output_tokens >= 1  # the prompt's estimate
    assert record.cost_note is not None and record.cost_note.startswith(ESTIMATED)


async def test_item_5_a_stream_call_tells_the_usage_reported_so_far_before_and_after_its_cut(
    server: StreamServer,
) -> None:
    chunks = [
        response([text_part("Once")], finish_reason=None, usage_metadata=usage(4200, 1)),
        response([text_part(" upon")], finish_reason=None, usage_metadata=usage(4200, 3, thoughts=5)),
    ]
    server.script(Reply.events(stream_body(chunks), ending="stall"))
    client = llmplex.Client(providers={"g": {"plugin": "gemini", "base_url": server.url, "api_key": KEY}})
    call = client.stream_call(MODEL, "tell a story", timeout=30)
    assert call.reported_so_far() is None  # not started
    events = call.astream()
    texts = [(await anext(events)).text for _ in range(2)]
    assert texts == ["Once", " upon"]
    so_far = call.reported_so_far()
    assert so_far is not None and (so_far.input_tokens, so_far.output_tokens) == (4200, 8)
    # the caller leaves: core folds what was reported into the answer so far
    await cast(AsyncGenerator[Any, None], events).aclose()
    cut = call.reported_so_far()
    assert cut is not None and (cut.input_tokens, cut.output_tokens, cut.reasoning_tokens) == (4200, 8, 5)


def _raises(call: object) -> Usage | None:
    raise RuntimeError("a plugin's usage so far broke")


def _negative(call: object) -> Usage | None:
    return Usage.model_construct(input_tokens=-5, output_tokens=-3, total_tokens=-8)


def _absurd(call: object) -> Usage | None:
    return Usage(input_tokens=10**11, output_tokens=10**11)


def _not_a_usage(call: object) -> Usage | None:
    return cast(Usage, {"input_tokens": 4200, "output_tokens": 8})


@pytest.mark.parametrize("reported_so_far", [_raises, _negative, _absurd, _not_a_usage])
def test_item_5_a_cut_stream_whose_usage_so_far_is_broken_is_charged_the_estimate(
    gateway: Gateway, server: StreamServer, monkeypatch: pytest.MonkeyPatch, reported_so_far: Any
) -> None:
    monkeypatch.setattr(Call, "reported_so_far", reported_so_far)
    record = _cut(gateway, server, [response([text_part("Once upon")], finish_reason=None)], b"upon")
    assert record.error_type == "client_disconnected" and record.usage is not None and record.usage_estimated
    assert record.usage.input_tokens > 900 and 1 <= record.usage.output_tokens < 100  # the prompt's estimate
    assert record.cost_usd is not None and record.cost_usd > 0
    assert record.cost_note is not None and record.cost_note.startswith(ESTIMATED)
