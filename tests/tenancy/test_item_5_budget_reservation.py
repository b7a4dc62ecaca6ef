"""Issue 31 item 5: budgets that do not overshoot.

Admission reserves each request's worst case (prompt + ``max_tokens``, or the model's output limit) on the
key's budget in the shared storage, settles it to the real cost when the answer ends, and gives it back on an
error or a cancel: 64 requests racing on two replicas over a budget worth N answers get at most N + 1 answers.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from llmplex.gateway.spend.estimate import prompt_tokens, worst_case_usd
from llmplex.types import Message
from tests.gateway.harness import gateway_config
from tests.gateway.keyed_support import MASTER, PRICED, KeyedGateway, bearer, chat, wait_for
from tests.support.fault_server import Fault, FaultServer
from tests.support.redis_server import REDIS_MISSING, RedisServer
from tests.tenancy.spend_support import running_keyed

V1 = "/v1/chat/completions"
ANSWER = Decimal("0.00000885")  # the fault server's answer: 19 tokens in, 10 out, at gpt-4o-mini's price
PROMPT = "hello " * 20  # 120 characters: estimated above the 19 tokens the fault server reports
N = 4


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


def _config(fault_server: FaultServer, storage: str = "memory://") -> dict[str, Any]:
    return gateway_config(
        fault_server, timeout=60, limits={"storage": storage}, gateway={"models": [PRICED], "key_cache_seconds": 0}
    )


@pytest.fixture
def one(fault_server: FaultServer) -> Iterator[KeyedGateway]:
    with running_keyed(_config(fault_server)) as gateway:
        yield gateway


@pytest.fixture
def replicas(tmp_path: Path, fault_server: FaultServer) -> Iterator[tuple[KeyedGateway, KeyedGateway]]:
    if shutil.which("redis-server") is None:
        pytest.fail(REDIS_MISSING, pytrace=False)
    with RedisServer(tmp_path / "redis") as redis:
        config = _config(fault_server, redis.url)
        with running_keyed(config) as first, running_keyed(config) as second:
            yield first, second


def _budget(gateway: KeyedGateway, name: str) -> dict[str, str]:
    shown = httpx.get(f"{gateway.url}/admin/keys/{name}", headers=MASTER, timeout=10).json()
    return dict(shown["budget"])


def _settled(gateway: KeyedGateway, name: str) -> dict[str, str]:
    wait_for(lambda: Decimal(_budget(gateway, name)["held_usd"]) == 0)
    return _budget(gateway, name)


def test_item_5_64_requests_racing_on_two_replicas_get_at_most_n_plus_one_answers(
    replicas: tuple[KeyedGateway, KeyedGateway], fault_server: FaultServer
) -> None:
    a, b = replicas
    key = a.create_key("raced", budget_usd=str(N * ANSWER))

    async def race() -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=60, headers=bearer(key)) as http:
            body = chat(text=PROMPT, max_tokens=10)
            return list(await asyncio.gather(*(http.post((a, b)[n % 2].url + V1, json=body) for n in range(64))))

    answers = asyncio.run(race())
    answered = [r for r in answers if r.status_code == 200]
    refused = [r for r in answers if r.status_code != 200]
    assert 1 <= len(answered) <= N + 1, len(answered)
    assert all(r.status_code == 429 and "budget" in r.json()["error"]["message"] for r in refused)
    assert len(fault_server.requests) == len(answered)  # the refused ones never went upstream
    reserved = {Decimal(r.headers["x-llmplex-budget-reserved-usd"]) for r in answered}
    assert len(reserved) == 1 and reserved.pop() >= ANSWER  # the worst case covers the real cost
    budget = _settled(b, "raced")  # every reservation settled or given back, seen from either replica
    assert Decimal(budget["spent_usd"]) == len(answered) * ANSWER <= N * ANSWER + ANSWER
    for gateway in (a, b):
        gateway.flush()
    spend = httpx.get(a.url + "/admin/spend?key=raced", headers=MASTER, timeout=10).json()["data"][0]
    assert spend["requests"] == 64 and Decimal(spend["cost_usd"]) == len(answered) * ANSWER
    print(f"answers admitted over a budget worth {N}: {len(answered) - N} ({len(answered)} of 64)")


def test_item_5_without_max_tokens_the_models_output_limit_is_held(
    one: KeyedGateway, fault_server: FaultServer
) -> None:
    messages = [Message.user(PROMPT)]
    worst = worst_case_usd("openai", "gpt-4o-mini", messages, {})
    assert worst == (prompt_tokens(messages, {}) * Decimal("0.15") + 16_384 * Decimal("0.6")) / 10**6
    key = one.create_key("unbounded", budget_usd="0.005")  # 565 answers, but not one worst case more
    fault_server.enqueue(Fault.trickle(0.005))  # a slow answer (a byte every 5 ms)
    first: list[httpx.Response] = []
    slow = threading.Thread(
        target=lambda: first.append(httpx.post(one.url + V1, json=chat(text=PROMPT), headers=bearer(key), timeout=30))
    )
    slow.start()
    wait_for(lambda: len(fault_server.requests) == 1)  # in flight, holding its worst case
    assert Decimal(_budget(one, "unbounded")["held_usd"]) == worst
    second = httpx.post(one.url + V1, json=chat(text=PROMPT), headers=bearer(key), timeout=30)
    assert second.status_code == 429 and second.headers["retry-after"] == "1"
    assert "held by requests in flight" in second.json()["error"]["message"]
    assert len(fault_server.requests) == 1
    slow.join(30)
    assert first[0].status_code == 200
    assert Decimal(first[0].headers["x-llmplex-budget-reserved-usd"]) == worst.quantize(Decimal("1e-9"))
    assert Decimal(_settled(one, "unbounded")["spent_usd"]) == ANSWER
    bounded = httpx.post(one.url + V1, json=chat(text=PROMPT, max_tokens=10), headers=bearer(key), timeout=30)
    assert bounded.status_code == 200 and Decimal(bounded.headers["x-llmplex-budget-reserved-usd"]) < worst


def test_item_5_an_error_or_a_cancel_gives_the_reservation_back(one: KeyedGateway, fault_server: FaultServer) -> None:
    key = one.create_key("careful", budget_usd="1")
    fault_server.enqueue(Fault.server_error(500))
    failed = httpx.post(one.url + V1, json=chat(text=PROMPT), headers=bearer(key), timeout=30)
    assert failed.status_code >= 500
    fault_server.enqueue(Fault.hang(5))
    with pytest.raises(httpx.ReadTimeout):  # the client gives up: the gateway cancels the call
        httpx.post(one.url + V1, json=chat(text=PROMPT), headers=bearer(key), timeout=0.5)
    wait_for(lambda: len(one.recorder.records) == 2)
    budget = _settled(one, "careful")
    assert Decimal(budget["spent_usd"]) == 0 and budget["budget_usd"] == "1"
    refused = httpx.post(one.url + V1, json=chat(text=PROMPT, max_tokens=-1), headers=bearer(key), timeout=30)
    assert refused.status_code == 400  # a hostile max_tokens never sizes a reservation
    assert Decimal(_settled(one, "careful")["held_usd"]) == 0


def test_item_5_the_reservation_is_sized_by_max_tokens_else_the_models_output_limit() -> None:
    import genai_prices

    from llmplex.reliability.budget import Budget

    messages = [Message.user(PROMPT)]
    prompt = prompt_tokens(messages, {})
    per_mtok = Decimal(10) ** 6

    def price(model: str, provider: str, output: int) -> Decimal:
        usage = genai_prices.Usage(input_tokens=prompt, output_tokens=output)
        return genai_prices.calc_price(usage, model, provider_id=provider).total_price

    assert worst_case_usd("openai", "gpt-4o-mini", messages, {"max_tokens": 10}) == price("gpt-4o-mini", "openai", 10)
    for hostile in (0, -5, True, "10", None):  # never a smaller reservation than the output limit
        assert worst_case_usd("openai", "gpt-4o-mini", messages, {"max_tokens": hostile}) == price(
            "gpt-4o-mini", "openai", 16_384
        )
    assert worst_case_usd("anthropic", "claude-sonnet-4-5", messages, {}) == price(
        "claude-sonnet-4-5", "anthropic", 64_000
    )
    window = genai_prices.calc_price(genai_prices.Usage(input_tokens=1), "gpt-3.5-turbo", provider_id="openai")
    assert window.model.context_window  # a model without a listed limit: its context window less the prompt
    expected = price("gpt-3.5-turbo", "openai", window.model.context_window - prompt)
    assert worst_case_usd("openai", "gpt-3.5-turbo", messages, {}) == expected
    assert worst_case_usd("mock", "echo", messages, {}) is None  # no price, no rates: refused before sending
    rates = Budget(unpriced_input_usd_per_mtok=Decimal(1), unpriced_output_usd_per_mtok=Decimal(2))
    assert worst_case_usd("mock", "echo", messages, {"max_tokens": 100}, rates) == (prompt + 200) / per_mtok
