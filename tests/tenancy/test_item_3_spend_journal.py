"""Issue 31 item 3: no answered request without its row, whatever happens to the database or the journal.

While PostgreSQL is down the gateway answers from its journal and readiness says degraded; the rows reach the
database once it is back. A journal that cannot be written refuses requests with a 503 and ``Retry-After``
before anything is sent. A replay never counts a row twice. When Redis loses its data, a key's budget counter
is rebuilt from the spend log.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from llmplex.gateway.records import RequestRecord
from llmplex.gateway.spend.log import request_row
from llmplex.store.journal import RowJournal
from llmplex.store.shipping import Shipper
from llmplex.types import Usage
from tests.gateway.harness import gateway_config
from tests.gateway.keyed_support import MASTER, PRICED, KeyedGateway, bearer, chat, wait_for
from tests.support.fault_server import FaultServer
from tests.support.redis_server import REDIS_MISSING, RedisServer
from tests.tenancy.spend_support import postgres, rows, running_keyed

V1 = "/v1/chat/completions"
ECHO = {"model": "mock:echo", "messages": [{"role": "user", "content": "hello"}]}
ANSWER = Decimal("0.00000885")  # the fault server's answer at gpt-4o-mini's price


def _post(gateway: KeyedGateway, key: str, body: dict[str, Any] = ECHO, path: str = V1) -> httpx.Response:
    return httpx.post(gateway.url + path, json=body, headers=bearer(key), timeout=30)


def _readiness(gateway: KeyedGateway) -> httpx.Response:
    return httpx.get(gateway.url + "/health/readiness", timeout=30)


def test_item_3_while_postgresql_is_down_answers_go_on_and_their_rows_arrive_later() -> None:
    with postgres() as database:
        config = gateway_config(gateway={"database": database.url, "models": ["mock:echo"], "key_cache_seconds": 0})
        with running_keyed(config) as gateway:
            key = gateway.create_key("steady")
            ids = [_post(gateway, key).headers["x-request-id"]]
            assert _readiness(gateway).json() == {"status": "ready"}
            database.stop()
            answers = [_post(gateway, key) for _ in range(10)]
            with httpx.stream("POST", gateway.url + V1, json={**ECHO, "stream": True}, headers=bearer(key)) as s:
                assert s.status_code == 200 and b"[DONE]" in s.read()
                ids.append(s.headers["x-request-id"])
            assert [a.status_code for a in answers] == [200] * 10  # no 500, no lost answer
            ids += [a.headers["x-request-id"] for a in answers]
            made = _post(gateway, key, {"model": "mock:echo", "input": "remember me"}, "/v1/responses")
            assert made.status_code == 200  # its owner waits in memory until the database is back
            going_on = {"model": "mock:echo", "input": "go on", "previous_response_id": made.json()["id"]}
            assert _post(gateway, key, going_on, "/v1/responses").status_code == 200
            ids += [made.headers["x-request-id"]]
            unknown = _post(gateway, "sk-llmplex-never-seen-while-the-database-is-down")
            assert unknown.status_code == 503 and unknown.headers["retry-after"] == "5"  # not let in blind
            ids.append(unknown.headers["x-request-id"])
            wait_for(lambda: _readiness(gateway).json()["status"] == "degraded", timeout=30)
            ready = _readiness(gateway)
            assert ready.status_code == 200 and "spend_log" in ready.json()["problems"]
            database.start()
            wait_for(lambda: set(ids) <= {row["request_id"] for row in rows(database.url)}, timeout=60)
            wait_for(lambda: _readiness(gateway).json() == {"status": "ready"}, timeout=30)
            assert _post(gateway, key, going_on, "/v1/responses").status_code == 200  # the owner reaches the database
            wait_for(lambda: made.json()["id"] in _owners(database.url))
        logged = [row["request_id"] for row in rows(database.url)]
        assert len(logged) == len(set(logged)) == len(ids) + 2  # the two turns that continued it too


def _owners(url: str) -> set[str]:
    from sqlalchemy import select

    from llmplex.store.database import open_database
    from llmplex.store.schema import response_owners

    engine = open_database(url)
    try:
        with engine.connect() as connection:
            return set(connection.execute(select(response_owners.c.response_id)).scalars())
    finally:
        engine.dispose()


@pytest.fixture
def keyed() -> Iterator[KeyedGateway]:
    config = gateway_config(gateway={"models": ["mock:echo"], "key_cache_seconds": 0})
    with running_keyed(config) as gateway:
        yield gateway


def test_item_3_an_unwritable_journal_is_a_503_before_anything_is_sent(keyed: KeyedGateway, tmp_path: Path) -> None:
    key = keyed.create_key("careful")
    assert _post(keyed, key).status_code == 200
    journal = keyed.app.state.journal.journal
    where = journal.directory
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    journal.close()
    journal.directory = blocker / "journal"  # no segment can be made there
    sent = len(keyed.mock.calls)
    responses = {"model": "mock:echo", "input": "hello"}
    refused = [
        _post(keyed, key),
        _post(keyed, key, {**ECHO, "stream": True}),
        _post(keyed, key, responses, "/v1/responses"),
        httpx.post(keyed.url + V1, json=ECHO, headers=MASTER, timeout=30),
    ]
    for answer in refused:
        assert answer.status_code == 503 and answer.headers["retry-after"] == "5", answer.text
        assert "journal" in answer.json()["error"]["message"]
    assert len(keyed.mock.calls) == sent  # nothing went upstream
    assert _readiness(keyed).status_code == 503 and "journal" in _readiness(keyed).json()["problems"]

    journal.directory = where  # writable again: requests pass once it is tried again (a second later)
    wait_for(lambda: _post(keyed, key).status_code == 200)
    journal.directory = blocker / "journal"  # the disk fills up: no new segment either...
    full = os.open("/dev/full", os.O_WRONLY)  # ...and the open one fails its next write
    os.dup2(full, journal._segment.fd)
    os.close(full)
    late, after = _post(keyed, key), _post(keyed, key)
    # an answer that existed before its write failed goes out (200) unless the failure was seen first (the
    # journal's fsync every second may find it): either way the request after it is refused before it is sent
    assert (late.status_code, after.status_code) in ((200, 503), (503, 503))
    if late.status_code == 200:  # its row, kept in memory, still reaches the database
        keyed.flush()
        wait_for(lambda: late.headers["x-request-id"] in {r["request_id"] for r in rows(_url(keyed))})


def _url(gateway: KeyedGateway) -> str:
    return str(gateway.keys.url)


def _row(number: int) -> dict[str, Any]:
    record = RequestRecord(
        request_id=f"req-test-{number}",
        endpoint="chat.completions",
        key_name="k",
        model_asked="mock:echo",
        provider="mock",
        model="echo",
        stream=False,
        status=200,
        error_type=None,
        usage=Usage(input_tokens=3, output_tokens=2),
        cost_usd=Decimal("0.0000012345"),
        cost_note=None,
        latency=0.01,
        started_at=1_700_000_000.0 + number,
    )
    return request_row(record)


def test_item_3_a_replay_counts_each_row_once_and_skips_a_line_a_crash_cut(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'spend.db'}"
    folder = tmp_path / "journal"
    journal = RowJournal(folder)
    for number in range(5):
        segment = journal.append(_row(number))
    os.write(segment.fd, b'{"request_id": "req-cut", "created_at": "2026-')  # the process died mid-line
    shutil.copy(segment.path, folder / "journal-0-copy.jsonl")  # the same rows twice (shipped, then a crash)
    journal.close()  # the process is gone: its segments are orphans now
    shipper = Shipper(RowJournal(folder), url).start()
    try:
        assert shipper.flush(30)
    finally:
        shipper.close()
    logged = rows(url)
    assert [row["request_id"] for row in logged] == [f"req-test-{n}" for n in range(5)]
    assert logged[0]["cost_usd"] == Decimal("0.0000012345") and logged[0]["input_tokens"] == 3
    assert shipper.replayed == 10 and shipper.shipped == 5
    assert not list(folder.glob("journal-*.jsonl"))  # shipped segments are deleted


def test_item_3_when_redis_loses_its_data_the_budget_is_rebuilt_from_the_spend_log(tmp_path: Path) -> None:
    if shutil.which("redis-server") is None:
        pytest.fail(REDIS_MISSING, pytrace=False)
    import redis

    with FaultServer() as faults, RedisServer(tmp_path / "redis") as server:
        config = gateway_config(
            faults, limits={"storage": server.url}, gateway={"models": [PRICED], "key_cache_seconds": 0}
        )
        with running_keyed(config) as gateway:
            key = gateway.create_key("thrifty", budget_usd=str(ANSWER * Decimal("2.5")))
            body = chat(text="hello " * 20, max_tokens=10)

            def spent() -> dict[str, str]:
                return dict(httpx.get(f"{gateway.url}/admin/keys/thrifty", headers=MASTER, timeout=10).json()["budget"])

            for _ in range(3):
                assert _post(gateway, key, body).status_code == 200
                wait_for(lambda: Decimal(spent()["held_usd"]) == 0)
            assert _post(gateway, key, body).status_code == 429
            gateway.flush()
            redis.Redis.from_url(server.url).flushall()  # Redis restarted without its data
            assert Decimal(spent()["spent_usd"]) == 0
            again = _post(gateway, key, body)
            assert again.status_code == 429 and "budget" in again.json()["error"]["message"]
            assert Decimal(spent()["spent_usd"]) == 3 * ANSWER  # as the spend log has it
            assert len(faults.requests) == 3
