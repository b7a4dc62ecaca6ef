"""Issue 33 item 3: deployment health in the [limits] storage, shared across processes through a real Redis."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import llmplex
from llmplex import Clock
from llmplex.routing.reach import SHARED_WAIT
from tests.groups.helpers import config, counts, servers
from tests.support.fault_server import Fault
from tests.support.redis_server import RedisServer

EAST_FIRST = Clock(random=lambda: 0.0)  # the weighted order starts with the first deployment (east)
_OTHER_PROCESS = """
import json, sys
import llmplex
from llmplex import Clock
settings = json.loads(sys.argv[1])
client = llmplex.Client(settings, clock=Clock(random=lambda: 0.0))
answer = client.complete("chat", "hi")
print(json.dumps({"provider": answer.provider, "attempts": answer.attempts}))
"""


def _shared(fakes: dict[str, Any], redis: RedisServer, **group: Any) -> dict[str, Any]:
    return config(fakes, {"cooldown": "30s", "allowed_fails": 1, **group}, limits={"storage": redis.url})


def test_item_3_one_process_failure_cools_the_deployment_for_another_process(redis_server: RedisServer) -> None:
    with servers("east", "west") as fakes:
        fakes["east"].enqueue(Fault.server_error(503))
        settings = _shared(fakes, redis_server)
        done = subprocess.run(
            [sys.executable, "-c", _OTHER_PROCESS, json.dumps(settings)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert json.loads(done.stdout.strip().splitlines()[-1]) == {"provider": "west", "attempts": 2}
        assert counts(fakes) == {"east": 1, "west": 1}
        client = llmplex.Client(settings, clock=EAST_FIRST)  # this process never saw east fail
        assert {client.complete("chat", "hi").provider for _ in range(3)} == {"west"}
        assert counts(fakes)["east"] == 1  # east cools for every process sharing the Redis


def test_item_3_in_flight_latency_and_rpm_are_shared_between_clients_on_one_redis(redis_server: RedisServer) -> None:
    with servers("east", "west") as fakes:
        settings = _shared(fakes, redis_server)
        settings["groups"]["chat"]["deployments"][0]["rpm"] = 1
        first = llmplex.Client(settings, clock=EAST_FIRST)
        second = llmplex.Client(settings, clock=EAST_FIRST)
        assert first.complete("chat", "hi").provider == "east"
        assert second.complete("chat", "hi").provider == "west"  # east's one request a minute is spent
        group = first.router.group("chat")
        east = group.deployments[0]
        group.started(east)
        east_state, west_state = second.router.group("chat").board.read([d.key for d in group.deployments], 1.0)
        assert east_state.busy == 1 and west_state.busy == 0
        assert east_state.latency is not None and east_state.latency > 0  # measured by the other client
        group.ended(east, "neutral", None, None)


def test_item_3_memory_storage_keeps_health_in_the_process() -> None:
    with servers("east", "west") as fakes:
        fakes["east"].enqueue(Fault.server_error(503))
        client = llmplex.Client(config(fakes, {"allowed_fails": 1, "cooldown": 30}), clock=EAST_FIRST)
        assert client.complete("chat", "hi").provider == "west"
        assert {client.complete("chat", "hi").provider for _ in range(3)} == {"west"}
        assert type(client.router.group("chat").board).__name__ == "MemoryBoard"


def test_item_3_a_redis_that_stops_answering_falls_back_to_local_state_by_the_deadline(
    redis_server: RedisServer,
) -> None:
    with servers("east", "west") as fakes:
        fakes["east"].enqueue(Fault.server_error(503))
        client = llmplex.Client(_shared(fakes, redis_server), clock=EAST_FIRST)
        assert client.complete("chat", "hi").provider == "west"  # east cooled, in Redis and locally
        redis_server.pause()
        try:
            started = time.monotonic()
            answer = client.complete("chat", "hi", timeout=SHARED_WAIT + 3)
            first = time.monotonic() - started
            started = time.monotonic()
            again = client.complete("chat", "hi", timeout=SHARED_WAIT + 3)
            second = time.monotonic() - started
        finally:
            redis_server.resume()
        assert answer.provider == again.provider == "west"  # the local board remembers east cooling
        assert first < SHARED_WAIT + 3 and second < first  # no look at Redis waits twice in a row
        assert counts(fakes)["east"] == 1


def test_item_3_a_deadline_shorter_than_the_shared_wait_bounds_the_look_at_redis(redis_server: RedisServer) -> None:
    with servers("east", "west") as fakes:
        client = llmplex.Client(_shared(fakes, redis_server), clock=EAST_FIRST)
        client.complete("chat", "warm up")
        redis_server.pause()
        try:
            started = time.monotonic()
            answer = client.complete("chat", "hi", timeout=2.0)
            elapsed = time.monotonic() - started
        finally:
            redis_server.resume()
        assert answer.provider in fakes and elapsed < 2.0


def test_item_3_a_redis_that_cannot_be_reached_leaves_routing_on_local_state() -> None:
    from tests.support.redis_server import free_port

    with servers("east", "west") as fakes:
        fakes["east"].enqueue(Fault.server_error(503))
        settings = config(
            fakes, {"allowed_fails": 1, "cooldown": 30}, limits={"storage": f"redis://127.0.0.1:{free_port()}/0"}
        )
        settings["groups"]["chat"]["deployments"][0]["rpm"] = 100
        client = llmplex.Client(settings, clock=EAST_FIRST)
        started = time.monotonic()
        assert client.complete("chat", "hi", timeout=30).provider == "west"
        assert {client.complete("chat", "hi", timeout=30).provider for _ in range(3)} == {"west"}  # cooled here
        assert time.monotonic() - started < 25 and counts(fakes)["east"] == 1
