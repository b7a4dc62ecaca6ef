"""Issue 33 item 5: groups in the gateway: /v1/models, key model patterns, spend rows, per-deployment metrics."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, select

from llmplex.store.schema import calls
from tests.gateway.harness import gateway_config
from tests.gateway.keyed_support import MASTER, KeyedGateway, bearer, chat, running_keyed
from tests.support.fault_server import Fault, FaultServer

V1 = "/v1/chat/completions"
EAST, WEST = "faulty:gpt-4o-mini", "faultyresp:gpt-4o-mini"


@pytest.fixture
def keyed(fault_server: FaultServer, tmp_path: Path) -> Iterator[KeyedGateway]:
    config = gateway_config(
        fault_server,
        timeout=30,
        throttle={"max_attempts": 3, "base_delay": 0},  # the group's attempts: a failure moves to the other
        groups={"chat": {"allowed_fails": 1, "cooldown": "60s", "deployments": [{"model": EAST}, {"model": WEST}]}},
        gateway={"database": f"sqlite:///{tmp_path / 'gw.db'}", "key_cache_seconds": 0},
    )
    with running_keyed(config) as gateway:
        yield gateway


def _rows(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as connection:
        return [dict(row) for row in connection.execute(select(calls).order_by(calls.c.id)).mappings()]


def test_item_5_a_group_is_a_model_and_a_key_allowed_only_the_group_cannot_use_its_deployments(
    keyed: KeyedGateway,
) -> None:
    key = keyed.create_key("group-only", models=["chat"])
    listed = httpx.get(keyed.url + "/v1/models", headers=bearer(key)).json()
    assert [m["id"] for m in listed["data"]] == ["chat"]
    assert "chat" in [m["id"] for m in httpx.get(keyed.url + "/v1/models", headers=MASTER).json()["data"]]
    answer = httpx.post(keyed.url + V1, json=chat("chat"), headers=bearer(key), timeout=30)
    assert answer.status_code == 200 and answer.json()["model"] == "chat"  # answered as asked
    for deployment in (EAST, WEST, "faulty:gpt-4o"):
        refused = httpx.post(keyed.url + V1, json=chat(deployment), headers=bearer(key), timeout=30)
        assert refused.status_code == 403, deployment
    other = keyed.create_key("deployments-only", models=["faulty*:*"])
    assert httpx.post(keyed.url + V1, json=chat("chat"), headers=bearer(other), timeout=30).status_code == 403


def test_item_5_the_spend_row_names_the_deployment_that_answered(
    keyed: KeyedGateway, fault_server: FaultServer
) -> None:
    key = keyed.create_key("team", models=["chat"])
    fault_server.enqueue(Fault.server_error(503))  # the first deployment tried fails: the other answers
    answer = httpx.post(keyed.url + V1, json=chat("chat"), headers=bearer(key), timeout=30)
    assert answer.status_code == 200
    keyed.flush(1)
    [row] = [r for r in _rows(keyed.keys.engine) if r["model_asked"] == "chat"]
    assert f"{row['provider']}:{row['model']}" in (EAST, WEST) and row["status"] == "ok"


def test_item_5_metrics_count_each_deployment_with_bounded_labels(
    keyed: KeyedGateway, fault_server: FaultServer
) -> None:
    fault_server.enqueue(Fault.server_error(503))
    for _ in range(3):
        answer = httpx.post(keyed.url + V1, json=chat("chat"), headers=MASTER, timeout=30)
        assert answer.status_code == 200
    httpx.post(keyed.url + V1, json=chat("faulty:made-up-model-x"), headers=MASTER, timeout=30)
    text = httpx.get(keyed.url + "/metrics", headers=MASTER).text
    lines = [line for line in text.splitlines() if line.startswith("llmplex_gateway_deployment_")]
    requests = {line for line in lines if line.startswith("llmplex_gateway_deployment_requests_total")}
    assert sum(float(line.rsplit(" ", 1)[1]) for line in requests) == 4  # 3 answers, one after a failure
    assert any('type="LLMServerError"' in line for line in lines if "failures_total" in line)
    assert any("cooldowns_total" in line and line.endswith(" 1.0") for line in lines)
    assert any("latency_seconds_count" in line for line in lines)
    assert "made-up-model-x" not in "\n".join(lines)
    assert all('group="chat"' in line for line in lines if "{" in line)


def test_item_5_the_dashboard_shows_a_group_split_and_its_cooldowns(
    keyed: KeyedGateway, fault_server: FaultServer
) -> None:
    fault_server.enqueue(Fault.server_error(503))  # allowed_fails 1: the deployment tried first cools for 60 s
    for _ in range(4):
        assert httpx.post(keyed.url + V1, json=chat("chat"), headers=MASTER, timeout=30).status_code == 200
    keyed.flush(4)
    view = httpx.get(keyed.url + "/ui/api/groups", headers=MASTER, timeout=30)
    assert view.status_code == 200, view.text
    [group] = view.json()["groups"]
    rows = {row["deployment"]: row for row in group["deployments"]}
    assert group["group"] == "chat" and group["calls"] == 4 and set(rows) == {EAST, WEST}
    cooling = [row for row in rows.values() if row["cooling_seconds"] > 0]
    answering = [row for row in rows.values() if row["cooling_seconds"] == 0]
    assert len(cooling) == 1 and 50 < cooling[0]["cooling_seconds"] <= 60
    assert answering[0]["calls"] == 4 and answering[0]["share"] == 1.0 and cooling[0]["calls"] == 0
    assert httpx.get(keyed.url + "/ui/api/groups", timeout=30).status_code in (401, 403)  # the master key only
    page = httpx.get(keyed.url + "/ui/static/app.js", headers=MASTER, timeout=30).text
    assert "api/groups" in page and "cooling" in page
