"""Fixtures of the coding-agent tests: a fault server (OpenAI wire), a fake Anthropic server, gateways over them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from tests.gateway.fake_anthropic import FakeAnthropic
from tests.gateway.harness import MASTER_KEY, PROVIDER_KEY, Gateway, gateway_config, running_gateway
from tests.support.fault_server import FaultServer


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


@pytest.fixture
def upstream() -> Iterator[FakeAnthropic]:
    """A local Messages API server recording each body (``bodies``), answering from its queue."""
    with FakeAnthropic() as fake:
        yield fake


def agents_config(fault_server: FaultServer, upstream: FakeAnthropic | None = None, **extra: Any) -> dict[str, Any]:
    """The mock; ``faulty:`` (Chat Completions) and ``faultyresp:`` (Responses) on the fault server; ``mistral:``
    (a provider without prompt cache or reasoning) on it too; ``anthropic:`` on the fake Anthropic server."""
    providers = {"mistral": {"plugin": "mistral", "base_url": fault_server.url, "api_key": PROVIDER_KEY}}
    if upstream is not None:
        providers["anthropic"] = {"plugin": "anthropic", "base_url": upstream.url, "api_key": PROVIDER_KEY}
    config = gateway_config(fault_server, **{"timeout": 30, **extra})
    config["providers"] = {**config["providers"], **providers, **extra.get("providers", {})}
    return config


@pytest.fixture
def gateway(fault_server: FaultServer, upstream: FakeAnthropic) -> Iterator[Gateway]:
    with running_gateway(agents_config(fault_server, upstream)) as running:
        yield running
        for client in _made(running).values():
            client.close()


def _made(gateway: Gateway) -> dict[str, Any]:
    """The SDK clients made for ``gateway`` (one of each kind), kept on it; the gateway fixture closes them."""
    made: dict[str, Any] = gateway.__dict__.setdefault("agent_clients", {})
    return made


def claude(gateway: Gateway) -> anthropic.Anthropic:
    """The anthropic SDK's client of ``gateway`` (made once)."""
    made = _made(gateway)
    if "anthropic" not in made:
        made["anthropic"] = anthropic.Anthropic(base_url=gateway.url, api_key=MASTER_KEY, max_retries=0)
    client: anthropic.Anthropic = made["anthropic"]
    return client


def oai(gateway: Gateway) -> openai.OpenAI:
    """The openai SDK's client of ``gateway`` (made once)."""
    made = _made(gateway)
    if "openai" not in made:
        made["openai"] = openai.OpenAI(base_url=gateway.url + "/v1", api_key=MASTER_KEY, max_retries=0)
    client: openai.OpenAI = made["openai"]
    return client
