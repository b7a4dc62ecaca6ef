"""Issue 22 item 4: every request in the spend log (off the hot path, streams at the same cost), and
``llmplex spend`` / ``GET /admin/spend`` reading it back, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, select

from llmplex.cli.main import cli
from llmplex.store.schema import calls
from tests.gateway.harness import MASTER_KEY, PROVIDER_KEY, gateway_config
from tests.gateway.keyed_support import MASTER, PRICED, KeyedGateway, bearer, chat, running_keyed
from tests.support.fault_server import Fault, FaultServer
from tests.support.postgres_server import postgres_url

V1 = "/v1/chat/completions"
PROMPT = "my-private-prompt-text-4711"
ONE_ANSWER = Decimal("0.00000885")  # 19 input + 10 output tokens of gpt-4o-mini
WAIT = 60
"""Seconds a request may take (bounded, not a margin): httpx's default 5 s was reached under load 8-16 by a first
request, which also loaded genai-prices' data before the gateway's warm-up did (1-3 s at load 5-14)."""


@pytest.fixture
def keyed(fault_server: FaultServer, tmp_path: Path) -> Iterator[KeyedGateway]:
    config = gateway_config(
        fault_server,
        timeout=10,
        gateway={"database": f"sqlite:///{tmp_path / 'gw.db'}", "key_cache_seconds": 0, "models": [PRICED]},
    )
    with running_keyed(config) as gateway:
        yield gateway


def _rows(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as connection:
        return [dict(row) for row in connection.execute(select(calls).order_by(calls.c.id)).mappings()]


def _traffic(gateway: KeyedGateway) -> str:
    """One of each kind of request; returns the key used."""
    key = gateway.create_key("team-a", models=["faulty*:*"], rpm=4)
    url = gateway.url
    assert httpx.post(url + V1, json=chat(text=PROMPT), headers=bearer(key), timeout=WAIT).status_code == 200
    streaming = chat(text=PROMPT, stream=True, stream_options={"include_usage": True})
    streamed = httpx.post(url + V1, json=streaming, headers=bearer(key), timeout=WAIT)
    assert streamed.status_code == 200 and b"[DONE]" in streamed.content
    nobody = bearer("sk-llmplex-nobody")
    assert httpx.post(url + V1, json=chat(text=PROMPT), headers=nobody, timeout=WAIT).status_code == 401
    assert httpx.post(url + V1, json=chat("mock:echo"), headers=bearer(key), timeout=WAIT).status_code == 403
    fault = httpx.post(url + V1, json=chat("faultyresp:gpt-4o-mini"), headers=bearer(key), timeout=WAIT)
    assert fault.status_code == 200  # the responses API instance answers too
    return key


def test_item_4_every_request_is_recorded_streams_at_the_same_cost(
    keyed: KeyedGateway, fault_server: FaultServer
) -> None:
    key = _traffic(keyed)
    fault_server.enqueue(Fault.server_error(500))
    assert httpx.post(keyed.url + V1, json=chat(), headers=bearer(key)).status_code >= 500
    assert httpx.post(keyed.url + V1, json=chat(), headers=bearer(key)).status_code == 429  # the 5th let in
    keyed.flush(7)
    rows = _rows(keyed.keys.engine)
    assert len(rows) == 7
    whole, streamed, unknown, forbidden, responses, failed, limited = rows
    for row in (whole, streamed):
        assert (row["key_name"], row["model_asked"], row["provider"], row["model"]) == (
            "team-a",
            PRICED,
            "faulty",
            "gpt-4o-mini",
        )
        assert (row["input_tokens"], row["output_tokens"], row["total_tokens"]) == (19, 10, 29)
        assert row["status"] == "ok" and row["error_type"] is None and row["latency"] > 0
    assert Decimal(whole["cost_usd"]) == Decimal(streamed["cost_usd"]) == ONE_ANSWER
    assert whole["options"] == {"endpoint": "chat.completions", "http_status": 200, "stream": False}
    assert streamed["options"]["stream"] is True
    assert (unknown["key_name"], unknown["status"], unknown["error_type"]) == (None, "error", "auth")
    assert forbidden["options"]["http_status"] == 403 and forbidden["error_type"] == "forbidden"
    assert responses["provider"] == "faultyresp" and Decimal(responses["cost_usd"]) == ONE_ANSWER
    assert failed["status"] == "error" and failed["options"]["http_status"] >= 500 and failed["cost_usd"] is None
    assert limited["options"]["http_status"] == 429 and limited["error_type"] == "rate_limit"
    assert {row["request_id"] for row in rows} == {record.request_id for record in keyed.recorder.records}


def test_item_4_no_key_secret_or_prompt_is_stored(keyed: KeyedGateway, tmp_path: Path) -> None:
    key = _traffic(keyed)
    keyed.flush(5)
    keyed.keys.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("gw.db*"))
    for secret in (key, key[len("sk-llmplex-") :], MASTER_KEY, PROVIDER_KEY, PROMPT, "Hello! How can I help?"):
        assert secret.encode() not in stored, secret
    assert all(row["prompt"] is None and row["answer"] is None for row in _rows(keyed.keys.engine))


def test_item_4_llmplex_spend_and_admin_spend_answer_from_the_log(keyed: KeyedGateway, tmp_path: Path) -> None:
    _traffic(keyed)
    other = keyed.create_key("team-b")
    for _ in range(3):
        assert httpx.post(keyed.url + V1, json=chat(), headers=bearer(other)).status_code == 200
    keyed.flush(8)
    config_file = tmp_path / "llmplex.toml"
    config_file.write_text(f'[gateway]\ndatabase = "sqlite:///{tmp_path / "gw.db"}"\n')

    def spend(*args: str) -> list[dict[str, Any]]:
        result = CliRunner().invoke(cli, ["--config", str(config_file), "spend", "--json", *args])
        assert result.exit_code == 0, result.output
        return [json.loads(line) for line in result.stdout.splitlines()]

    by_key = {row["key"]: row for row in spend()}
    assert by_key["team-b"]["requests"] == 3 and Decimal(by_key["team-b"]["cost_usd"]) == 3 * ONE_ANSWER
    assert by_key["team-a"]["requests"] == 4 and Decimal(by_key["team-a"]["cost_usd"]) == 3 * ONE_ANSWER
    assert spend("--key", "team-b", "--by", "model") == [
        {"model": "faulty:gpt-4o-mini", "requests": 3, "input_tokens": 57, "output_tokens": 30,
         "cost_usd": "0.00002655", "unpriced_requests": 0}
    ]  # fmt: skip
    assert [(row["key"], row["requests"]) for row in spend("--model", "mock:echo")] == [("team-a", 1)]  # the 403
    assert len(spend("--by", "day")) == 1 and spend("--since", "2999-01-01") == []
    bad = CliRunner().invoke(cli, ["--config", str(config_file), "spend", "--since", "yesterday"])
    assert bad.exit_code != 0 and "2026-11-26" in bad.output
    admin = httpx.get(keyed.url + "/admin/spend", params={"by": "key"}, headers=MASTER).json()
    assert {row["key"]: row for row in admin["data"]} == by_key
    assert httpx.get(keyed.url + "/admin/spend", params={"by": "colour"}, headers=MASTER).status_code == 400
    table = CliRunner().invoke(cli, ["--config", str(config_file), "spend"]).stdout
    assert "team-b" in table and "$0.00002655" in table


def test_item_4_a_locked_database_never_holds_a_request(keyed: KeyedGateway, tmp_path: Path) -> None:
    key = keyed.create_key("busy")
    keyed.flush()
    lock = sqlite3.connect(tmp_path / "gw.db", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")  # no other connection may write (or read) until it ends
    try:
        with httpx.Client(base_url=keyed.url, headers=bearer(key), timeout=10) as client:
            started = time.perf_counter()
            codes = [client.post(V1, json=chat()).status_code for _ in range(20)]
            spent = time.perf_counter() - started
        assert codes == [200] * 20 and spent < 10, spent  # every answer went out while the log could not be written
    finally:
        lock.execute("COMMIT")
        lock.close()
    keyed.flush()
    assert sum(row["key_name"] == "busy" for row in _rows(keyed.keys.engine)) == 20


def test_item_4_postgresql_holds_keys_and_spend(fault_server: FaultServer, tmp_path: Path) -> None:
    with postgres_url() as url:
        config = gateway_config(fault_server, timeout=10, gateway={"database": url, "key_cache_seconds": 0})
        with running_keyed(config) as gateway:
            key = gateway.create_key("pg-team", budget_usd="1")
            assert httpx.post(gateway.url + V1, json=chat(), headers=bearer(key)).status_code == 200
            streamed = httpx.post(gateway.url + V1, json=chat(stream=True), headers=bearer(key))
            assert streamed.status_code == 200
            gateway.flush(2)
            assert gateway.keys.engine.dialect.name == "postgresql"
            rows = _rows(gateway.keys.engine)
        assert [(r["key_name"], Decimal(r["cost_usd"])) for r in rows] == [("pg-team", ONE_ANSWER)] * 2
        config_file = tmp_path / "pg.toml"
        config_file.write_text(f'[gateway]\ndatabase = "{url}"\n')
        result = CliRunner().invoke(cli, ["--config", str(config_file), "spend", "--json"])
        assert json.loads(result.stdout)["cost_usd"] == "0.0000177", result.output
        listed = CliRunner().invoke(cli, ["--config", str(config_file), "keys", "list"]).stdout
        assert listed.startswith("pg-team\tactive")


def test_item_4_log_bodies_keeps_prompts_and_answers_but_never_keys(fault_server: FaultServer, tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'bodies.db'}"
    config = gateway_config(fault_server, timeout=10, gateway={"database": database, "log_bodies": True})
    with running_keyed(config) as gateway:
        key = gateway.create_key("talkative")
        whole = httpx.post(gateway.url + V1, json=chat(text=PROMPT), headers=bearer(key))
        streamed = httpx.post(gateway.url + V1, json=chat(text=PROMPT + "-2", stream=True), headers=bearer(key))
        assert whole.status_code == streamed.status_code == 200
        assert httpx.post(gateway.url + V1, json=chat(text=PROMPT), headers=MASTER).status_code == 200
        gateway.flush(3)
        rows = _rows(gateway.keys.engine)
        gateway.keys.close()
    assert [row["prompt_text"] for row in rows] == [PROMPT, PROMPT + "-2", PROMPT]
    assert all(row["answer_text"] == "Hello! How can I help?" for row in rows)
    assert rows[0]["prompt"] == [{"role": "user", "content": PROMPT}]
    assert [row["key_name"] for row in rows] == ["talkative", "talkative", "master"]
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("bodies.db*"))
    for secret in (key, MASTER_KEY, PROVIDER_KEY):
        assert secret.encode() not in stored
