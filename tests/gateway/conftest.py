"""Fixtures of the gateway tests: a fault server and a real gateway in front of it and the mock."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from tests.gateway.harness import Gateway, gateway_config, running_gateway
from tests.support.fault_server import FaultServer

for _module, _install in (("starlette", "llmplex[gateway]"), ("openai", "openai"), ("anthropic", "anthropic")):
    if importlib.util.find_spec(_module) is None:
        raise RuntimeError(f"the gateway tests need {_module}: pip install -e 'core[gateway]' {_install}")


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    """A fault-injecting OpenAI-compatible server (successes until told otherwise)."""
    with FaultServer() as server:
        yield server


@pytest.fixture
def gateway(fault_server: FaultServer) -> Iterator[Gateway]:
    """A real gateway on 127.0.0.1 over the mock and ``faulty:`` (the fault server)."""
    with running_gateway(gateway_config(fault_server, timeout=3)) as running:
        yield running
