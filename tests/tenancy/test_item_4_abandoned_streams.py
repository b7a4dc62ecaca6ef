"""Issue 31 item 4: an abandoned or cut stream is charged.

The row and the key's budget get the usage the upstream reported or, when it reported none, the prompt's tokens
plus the output streamed so far, estimated, marked as an estimate and priced: never NULL, never $0.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from llmplex.gateway.spend.estimate import StreamProgress, prompt_tokens
from llmplex.store.database import default_url, open_database
from llmplex.store.schema import calls
from llmplex.types import Message, StreamEvent, Usage
from tests.gateway.harness import gateway_config
from tests.gateway.keyed_support import MASTER, PRICED, KeyedGateway, bearer, chat, wait_for
from tests.support.fault_server import Fault, FaultServer
from tests.tenancy.spend_support import running_keyed

V1 = "/v1/chat/completions"
PROMPT = "Tell me a long story about a lighthouse keeper. " * 80  # 3,840 characters
PROMPT_TOKENS = prompt_tokens([Message.user(PROMPT)], {})
PROMPT_COST = PROMPT_TOKENS * Decimal("0.15") / 10**6  # gpt-4o-mini's input price


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


@pytest.fixture
def keyed(fault_server: FaultServer) -> Iterator[KeyedGateway]:
    # no keep-alive before the first event: the first chunk a client reads is the upstream's first event (or its
    # error status), however long the gateway's first call spends loading plugins (a full garbage collection
    # there blocks its loop for most of a second on a loaded machine)
    gateway = {"models": [PRICED], "key_cache_seconds": 0, "keepalive_seconds": 30}
    config = gateway_config(fault_server, timeout=60, gateway=gateway)
    with running_keyed(config) as gateway:
        yield gateway


def _rows() -> list[dict[str, Any]]:
    engine = open_database(default_url())
    try:
        with engine.connect() as connection:
            return [dict(row) for row in connection.execute(select(calls).order_by(calls.c.id)).mappings()]
    finally:
        engine.dispose()


def _budget(gateway: KeyedGateway, name: str) -> dict[str, str]:
    return dict(httpx.get(f"{gateway.url}/admin/keys/{name}", headers=MASTER, timeout=10).json()["budget"])


def _abandon(gateway: KeyedGateway, key: str) -> int:
    """Start a stream, read its first bytes, and leave; the status it had."""
    with httpx.stream("POST", gateway.url + V1, json=chat(text=PROMPT, stream=True), headers=bearer(key)) as answer:
        if answer.status_code == 200:
            next(answer.iter_raw())
        return answer.status_code


def test_item_4_five_abandoned_streams_exhaust_a_budget_of_two_and_a_half_answers(
    keyed: KeyedGateway, fault_server: FaultServer
) -> None:
    key = keyed.create_key("leaver", budget_usd=str(PROMPT_COST * Decimal("2.5")))
    statuses = []
    for number in range(5):
        fault_server.enqueue(Fault.stream_stall(after_events=2, seconds=30))
        statuses.append(_abandon(keyed, key))
        wait_for(lambda n=number: len(keyed.recorder.records) == n + 1)  # the gateway saw it leave
        wait_for(lambda: Decimal(_budget(keyed, "leaver")["held_usd"]) == 0)  # settled
    assert statuses == [200, 200, 200, 429, 429]  # the third left the budget spent
    keyed.flush()
    charged = [row for row in _rows() if row["status"] == "error" and row["error_type"] == "client_disconnected"]
    assert len(charged) == 3
    for row in charged:
        assert row["cost_usd"] is not None and row["cost_usd"] > PROMPT_COST  # the prompt and what was streamed
        assert row["input_tokens"] == PROMPT_TOKENS and row["output_tokens"] >= 1
        assert row["cost_note"].startswith("estimated") and row["options"]["usage_estimated"] is True
    spent = Decimal(_budget(keyed, "leaver")["spent_usd"])
    assert spent == sum(row["cost_usd"] for row in charged) >= PROMPT_COST * Decimal("2.5")


def test_item_4_a_stream_the_upstream_cuts_is_charged_too(keyed: KeyedGateway, fault_server: FaultServer) -> None:
    key = keyed.create_key("cut", budget_usd="1")
    fault_server.enqueue(Fault.stream_cut(after_events=2))
    with httpx.stream("POST", keyed.url + V1, json=chat(text=PROMPT, stream=True), headers=bearer(key)) as answer:
        body = answer.read()
    assert answer.status_code == 200 and b"error" in body
    wait_for(lambda: len(keyed.recorder.records) == 1)
    keyed.flush()
    (row,) = _rows()
    assert row["status"] == "error" and row["cost_usd"] > PROMPT_COST and row["cost_note"].startswith("estimated")
    wait_for(lambda: Decimal(_budget(keyed, "cut")["spent_usd"]) == row["cost_usd"])


def test_item_4_a_refused_stream_costs_nothing(keyed: KeyedGateway, fault_server: FaultServer) -> None:
    key = keyed.create_key("refused", budget_usd="1")
    fault_server.enqueue(Fault.rate_limit(retry_after=1))  # nothing generated: nothing to charge
    assert _abandon(keyed, key) == 429
    wait_for(lambda: len(keyed.recorder.records) == 1)
    keyed.flush()
    (row,) = _rows()
    assert row["cost_usd"] is None and row["input_tokens"] is None
    assert Decimal(_budget(keyed, "refused")["spent_usd"]) == 0


def test_item_4_reported_usage_wins_over_the_estimate() -> None:
    messages = [Message.user(PROMPT)]
    progress = StreamProgress()
    progress.see(StreamEvent(type="text", text="Once upon"))
    assert progress.usage(messages, {}) == (Usage(input_tokens=PROMPT_TOKENS, output_tokens=3), True)
    progress.see(StreamEvent(type="usage", usage=Usage(input_tokens=1200, output_tokens=40)))
    assert progress.usage(messages, {}) == (Usage(input_tokens=1200, output_tokens=40), False)
    progress.see(StreamEvent(type="text", text="x" * 400))  # past what was reported: the output is estimated
    usage, estimated = progress.usage(messages, {})
    assert usage.input_tokens == 1200 and usage.output_tokens == 103 and estimated
    empty = StreamProgress()  # left before any output: the prompt alone, never nothing
    assert empty.usage(messages, {})[0].input_tokens == PROMPT_TOKENS
