"""A key with a USD budget never spends a model whose price is unknown as free (issue 21's rule at the gateway):
it is refused before anything is sent, unless ``[budget]`` gives the ``unpriced_*`` rates to count it at."""

from __future__ import annotations

import httpx

from tests.gateway.harness import gateway_config
from tests.gateway.keyed_support import KeyedGateway, bearer, chat, running_keyed
from tests.support.fault_server import FaultServer

V1 = "/v1/chat/completions"
UNPRICED = "faulty:model-no-price-list-knows"  # answered by the fault server, priced by nobody


def _gateway(fault_server: FaultServer, **budget: str) -> KeyedGateway:
    extra = {"budget": budget} if budget else {}
    config = gateway_config(fault_server, gateway={"key_cache_seconds": 0}, **extra)
    return running_keyed(config)  # type: ignore[return-value]


def test_item_3_an_unpriced_model_under_a_key_budget_is_refused_before_sending(fault_server: FaultServer) -> None:
    with _gateway(fault_server) as gateway:
        key = gateway.create_key("capped", budget_usd="1")
        answer = httpx.post(gateway.url + V1, json=chat(UNPRICED), headers=bearer(key), timeout=20)
        free = gateway.create_key("uncapped")
        assert httpx.post(gateway.url + V1, json=chat(UNPRICED), headers=bearer(free), timeout=20).status_code == 200
    assert 400 <= answer.status_code < 500, answer.text
    assert "price" in answer.json()["error"]["message"]
    assert len(fault_server.requests) == 1, "only the key without a budget reached the provider"


def test_item_3_an_unpriced_model_counts_at_the_configured_rates_never_as_free(fault_server: FaultServer) -> None:
    """$10,000 per million tokens: the fault server's 19 + 10 tokens cost $0.29, so a $0.5 budget takes two."""
    rates = {"unpriced_input_usd_per_mtok": "10000", "unpriced_output_usd_per_mtok": "10000"}
    with _gateway(fault_server, **rates) as gateway:
        key = gateway.create_key("rated", budget_usd="0.5")
        first = httpx.post(gateway.url + V1, json=chat(UNPRICED), headers=bearer(key), timeout=20)
        gateway.flush()
        second = httpx.post(gateway.url + V1, json=chat(UNPRICED), headers=bearer(key), timeout=20)
        gateway.flush()
        third = httpx.post(gateway.url + V1, json=chat(UNPRICED), headers=bearer(key), timeout=20)
    assert (first.status_code, second.status_code) == (200, 200), (first.text, second.text)
    assert third.status_code == 429 and "spent" in third.json()["error"]["message"], third.text
