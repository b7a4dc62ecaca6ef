"""Issue 34 item 5: the gateway's per-request work cut, its behaviour kept.

The API routes are dispatched by their path straight to the ``Door`` and the endpoint (past Starlette's
error, exception and routing layers); the metrics' children are looked up once per label set; the memory
throttle asks its storage only about addresses that failed within the window; a hold with nothing in it is not
settled; the access line skips the caller lookup. What must not change: every answered request has its spend
row (whole, streamed, failed, refused), the door still counts failed authentications and holds back an address,
every answer carries the overhead header, other methods and paths are answered as before, the metrics count
every request, and the access line has its fields. A cached key changed or revoked through ``/admin`` is seen
on the next request.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import httpx

from llmplex.gateway.ops import metrics as gateway_metrics
from llmplex.gateway.ops.metrics import Metrics
from llmplex.gateway.records import RequestRecord
from llmplex.types import Usage
from tests.gateway.harness import MASTER_KEY, gateway_config, running_gateway
from tests.gateway.keyed_support import bearer
from tests.tenancy.guard_support import guarded_gateway
from tests.tenancy.spend_support import rows, running_keyed

ECHO = {"model": "mock:echo", "messages": [{"role": "user", "content": "hello"}]}


def test_item_5_every_answer_of_the_api_routes_has_its_spend_row(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'gw.db'}"
    config = gateway_config(gateway={"database": url, "models": ["mock:echo"], "key_cache_seconds": 0})
    with running_keyed(config) as gateway:
        key = gateway.create_key("hot")
        with httpx.Client(base_url=gateway.url, headers=bearer(key), timeout=30) as http:
            answers = [
                http.post("/v1/chat/completions", json=ECHO),
                http.post("/v1/responses", json={"model": "mock:echo", "input": "hello"}),
                http.post("/v1/messages", json={**ECHO, "max_tokens": 10}),
                http.post("/v1/chat/completions", content=b"not json"),
                http.post("/v1/chat/completions", json=ECHO, headers={"authorization": "Bearer sk-llmplex-wrong"}),
            ]
            with http.stream("POST", "/v1/chat/completions", json={**ECHO, "stream": True}) as streamed:
                assert b"[DONE]" in streamed.read()
            answers.append(streamed)
        assert [a.status_code for a in answers] == [200, 200, 200, 400, 401, 200]
        gateway.flush(len(answers))
        logged = {row["request_id"]: row for row in rows(url)}
    for answer in answers:
        row = logged[answer.headers["x-request-id"]]
        assert row["options"]["http_status"] == answer.status_code
    assert [logged[a.headers["x-request-id"]]["key_name"] for a in answers] == ["hot"] * 4 + [None, "hot"]


def test_item_5_the_api_routes_still_pass_the_door_and_other_methods_are_refused_as_before() -> None:
    config = gateway_config(gateway={"auth_failures": 2})
    with guarded_gateway(config) as gateway, httpx.Client(base_url=gateway.url, timeout=30) as http:
        wrong = [http.post("/v1/chat/completions", json=ECHO, headers=bearer("wrong")) for _ in range(2)]
        held = http.post("/v1/messages", json=ECHO, headers={"x-api-key": "wrong"})
        right = http.post("/v1/chat/completions", json=ECHO, headers=bearer(MASTER_KEY))
        other_method = http.get("/v1/chat/completions", headers=bearer(MASTER_KEY))
        other_path = http.post("/v1/chat/completions/", json=ECHO, headers=bearer(MASTER_KEY))
    assert [a.status_code for a in wrong] == [401, 401]
    assert held.status_code == 429 and held.json()["error"]["type"] == "rate_limit_error"  # the door, in its shape
    assert right.status_code == 429  # the address is held back whatever key it now sends, on every path
    assert other_method.status_code == 429 and other_path.status_code == 429
    for answer in [*wrong, held, right, other_method, other_path]:
        assert float(answer.headers["x-llmplex-overhead-ms"]) >= 0, answer


def test_item_5_other_methods_and_paths_near_the_api_routes_answer_as_before() -> None:
    with (
        guarded_gateway(gateway_config()) as gateway,
        httpx.Client(base_url=gateway.url, headers=bearer(MASTER_KEY), timeout=30) as http,
    ):
        fine = http.post("/v1/chat/completions", json=ECHO)
        other_method = http.get("/v1/chat/completions")
        other_path = http.post("/v1/chat/completions/extra", json=ECHO)
        models = http.get("/v1/models")
    assert fine.status_code == 200 and fine.json()["choices"][0]["message"]["content"]
    assert other_method.status_code == 405 and other_method.json()["error"]["type"] == "invalid_request_error"
    assert other_path.status_code == 404 and other_path.json()["error"]["message"].startswith("no route POST")
    assert models.status_code == 200 and "mock:echo" in [m["id"] for m in models.json()["data"]]


def _record(key: str, status: int = 200, usage: Usage | None = None, error: str | None = None) -> RequestRecord:
    return RequestRecord(
        request_id="req-1",
        endpoint="chat.completions",
        key_name=key,
        model_asked="mock:echo",
        provider="mock",
        model="echo",
        stream=False,
        status=status,
        error_type=error,
        usage=usage,
        cost_usd=None,
        cost_note=None,
        latency=0.01,
        started_at=0.0,
    )


def _samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in metrics.registry.collect()
        for sample in family.samples
    }


def _value(samples: dict[Any, float], name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def test_item_5_metrics_count_every_request_per_label_set_with_children_looked_up_once(monkeypatch: Any) -> None:
    monkeypatch.setattr(gateway_metrics, "_MAX_CACHED", 2)  # the cache starts again often: counts go on
    metrics = Metrics()
    usage = Usage(input_tokens=3, output_tokens=5)
    for _ in range(3):
        metrics.observe(_record("a", usage=usage), 0.001)
        metrics.observe(_record("b"), 0.001)
        metrics.observe(_record("a", status=502, error="upstream"), None)
    gauge = metrics.gauge("chat.completions")
    gauge.inc()
    gauge.inc()
    metrics.gauge("chat.completions").dec()
    samples = _samples(metrics)
    base = {"endpoint": "chat.completions", "model": "other", "provider": "other"}
    assert _value(samples, "llmplex_gateway_requests_total", **base, key="a", status="200") == 3
    assert _value(samples, "llmplex_gateway_requests_total", **base, key="b", status="200") == 3
    assert _value(samples, "llmplex_gateway_requests_total", **base, key="a", status="502") == 3
    assert _value(samples, "llmplex_gateway_errors_total", **base, key="a", type="upstream") == 3
    tokens = {"model": "other", "provider": "other", "key": "a"}
    assert _value(samples, "llmplex_gateway_tokens_total", **tokens, kind="input") == 9
    assert _value(samples, "llmplex_gateway_tokens_total", **tokens, kind="output") == 15
    assert _value(samples, "llmplex_gateway_tokens_total", **tokens, kind="cached") is None  # never counted: no series
    latency = {"endpoint": "chat.completions", "model": "other"}
    assert _value(samples, "llmplex_gateway_request_latency_seconds_count", **latency) == 9
    assert _value(samples, "llmplex_gateway_overhead_seconds_count", endpoint="chat.completions") == 6
    assert _value(samples, "llmplex_gateway_in_flight", endpoint="chat.completions") == 1


def test_item_5_the_memory_throttle_holds_back_only_addresses_that_failed_within_the_window() -> None:
    from llmplex.gateway.guard.throttle import AuthThrottle
    from llmplex.reliability.storage import MEMORY, LimitsStore

    async def scenario() -> list[float | None]:
        throttle = AuthThrottle(LimitsStore(MEMORY), failures=2, window=60)
        seen = [await throttle.retry_after("10.0.0.1")]
        await throttle.failed("10.0.0.1")
        seen.append(await throttle.retry_after("10.0.0.1"))  # one failure of two: let through
        await throttle.failed("10.0.0.1")
        seen += [await throttle.retry_after("10.0.0.1"), await throttle.retry_after("10.0.0.2")]
        throttle._failed_at["10.0.0.1"] -= 61  # its last failure left the window: the storage is not asked
        seen.append(await throttle.retry_after("10.0.0.1"))
        return seen

    first, one, held, other, later = asyncio.run(scenario())
    assert first is None and one is None and other is None and later is None
    assert held is not None and 1.0 <= held <= 60


def test_item_5_the_access_line_keeps_its_fields(caplog: Any) -> None:
    with running_gateway(gateway_config()) as gateway, caplog.at_level(logging.INFO, logger="llmplex.gateway"):
        answer = httpx.post(f"{gateway.url}/v1/chat/completions", json=ECHO, headers=bearer(MASTER_KEY), timeout=30)
        gateway.recorder.wait_for(lambda record: record.request_id == answer.headers["x-request-id"])
    lines = [r for r in caplog.records if r.getMessage() == "request" and r.__dict__.get("endpoint")]
    assert lines, caplog.records
    line = lines[-1].__dict__
    assert line["request_id"] == answer.headers["x-request-id"] and line["status"] == 200
    assert line["key"] == "master" and line["model"] == "mock:echo" and line["stream"] is False
    assert line["latency_ms"] > 0 and lines[-1].levelno == logging.INFO and lines[-1].name == "llmplex.gateway"


def test_item_5_a_cached_key_changed_or_revoked_through_admin_is_seen_on_the_next_request(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'gw.db'}"
    config = gateway_config(gateway={"database": url, "models": ["mock:echo"], "key_cache_seconds": 3600})
    with running_keyed(config) as gateway, httpx.Client(base_url=gateway.url, timeout=30) as http:
        key = gateway.create_key("cached")
        first = http.post("/v1/chat/completions", json=ECHO, headers=bearer(key))  # the key is cached for an hour
        changed = http.patch("/admin/keys/cached", json={"models": ["mock:other"]}, headers=bearer(MASTER_KEY))
        refused = http.post("/v1/chat/completions", json=ECHO, headers=bearer(key))
        revoked = http.delete("/admin/keys/cached", headers=bearer(MASTER_KEY))
        gone = http.post("/v1/chat/completions", json=ECHO, headers=bearer(key))
    assert first.status_code == 200 and changed.status_code == 200 and revoked.status_code == 200
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "model_not_allowed"
    assert gone.status_code == 401 and "revoked" in gone.json()["error"]["message"]
