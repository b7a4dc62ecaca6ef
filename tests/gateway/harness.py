"""A real gateway on 127.0.0.1 for the tests: uvicorn (uvloop, httptools) in a thread over an ``llmplex.Client``.

The server thread shares the test's process, so a test can script the mock
provider (``client.provider_client("mock")``) and read the gateway's metrics,
while its clients (the official SDKs, raw sockets) talk to it over real TCP.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import uvicorn

import llmplex
from llmplex.gateway.app import create_app
from llmplex.gateway.keys.access import MasterKeyAuthenticator
from llmplex.gateway.records import RequestRecord
from tests.support.fault_server import FaultServer

MASTER_KEY = "sk-gateway-master-0123456789abcdef"
PROVIDER_KEY = "sk-upstream-secret-key-9876543210"


class ListRecorder:
    """A recorder keeping every record (the tests read it, or wait for one with ``wait_for``)."""

    def __init__(self) -> None:
        self.records: list[RequestRecord] = []
        self._added = threading.Condition()

    def record(self, record: RequestRecord) -> None:
        with self._added:
            self.records.append(record)
            self._added.notify_all()

    def wait_for(self, matches: Callable[[RequestRecord], bool], timeout: float = 60.0) -> RequestRecord:
        """The first record that ``matches``, waiting for it to be made (a stream's record follows its last
        byte, which the client may have read already); bounded by ``timeout``."""
        with self._added:
            found = self._added.wait_for(lambda: next((r for r in self.records if matches(r)), None), timeout)
        assert found is not None, f"no such record within {timeout} s: {self.records}"
        return found

    def wait_count(self, count: int, timeout: float = 60.0) -> None:
        """Wait until ``count`` records were made (bounded by ``timeout``)."""
        with self._added:
            assert self._added.wait_for(lambda: len(self.records) >= count, timeout), self.records


class Gateway:
    """A running gateway: ``url`` (no ``/v1``), ``client`` (its llmplex Client), ``recorder``."""

    def __init__(self, client: llmplex.Client, **app_args: Any) -> None:
        self.client = client
        self.recorder = ListRecorder()
        self.app = create_app(client, MasterKeyAuthenticator(MASTER_KEY), recorders=[self.recorder], **app_args)
        config = uvicorn.Config(
            self.app,
            host="127.0.0.1",
            port=0,
            loop="uvloop",
            http="httptools",
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> Gateway:
        self._thread.start()
        deadline = time.monotonic() + 120  # bounded, not a margin: a loaded machine took 17 s to start one
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the gateway did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(10)

    @property
    def port(self) -> int:
        return int(self.server.servers[0].sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mock(self) -> Any:
        """The mock provider's backend (script answers with ``push``, read ``calls``)."""
        return self.client.provider_client("mock")


def gateway_config(fault_server: FaultServer | None = None, **extra: Any) -> dict[str, Any]:
    """A config: the mock, and ``faulty:`` (the OpenAI plugin, Chat Completions) in front of ``fault_server``."""
    providers: dict[str, Any] = {}
    if fault_server is not None:
        providers["faulty"] = {"plugin": "openai", "base_url": fault_server.url, "api": "chat", "api_key": PROVIDER_KEY}
        providers["faultyresp"] = {
            "plugin": "openai",
            "base_url": fault_server.url,
            "api": "responses",
            "api_key": PROVIDER_KEY,
        }
    config: dict[str, Any] = {
        "providers": providers,
        "throttle": {"max_attempts": 1},
        "aliases": {"fast": "mock:echo"},
        # a keep-alive commits a stream's 200 before the upstream answers: under load a 0.2 s one went out before
        # a 429 and turned it into an error event; tests of keep-alives set theirs
        "gateway": {"models": ["mock:echo", "mock:embed"], "keepalive_seconds": 30},
    }
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    return config


@contextmanager
def running_gateway(config: Mapping[str, Any], **app_args: Any) -> Iterator[Gateway]:
    """A started gateway over a Client of ``config``; stopped afterwards."""
    gateway = Gateway(llmplex.Client(dict(config)), **app_args).start()
    try:
        yield gateway
    finally:
        gateway.stop()
