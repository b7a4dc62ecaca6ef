"""Pytest fixtures for the fault server and a real redis-server; import them in a conftest to use them."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.support.fault_server import FaultServer
from tests.support.redis_server import REDIS_MISSING, RedisServer


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    """A started FaultServer answering successes until told otherwise; stopped after the test."""
    with FaultServer() as server:
        yield server


@pytest.fixture(scope="session")
def redis_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One real redis-server for the session (see ``tests/support/redis_server.py``)."""
    if shutil.which("redis-server") is None:
        pytest.fail(REDIS_MISSING, pytrace=False)
    with RedisServer(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def redis_server(redis_session: RedisServer) -> RedisServer:
    """The session's redis-server, emptied for this test; ``redis_server.url`` is its URL."""
    redis_session.flush()
    return redis_session
