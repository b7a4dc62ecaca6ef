"""Issue 31 item 3: a ``kill -9`` right after a burst loses no row.

A real ``llmplex serve`` process answers a burst of concurrent requests while the database is locked (so no
row of the burst has reached it) and is killed with SIGKILL the moment the last answer arrives; the next
process on the same data directory replays the journal at start, and the database then holds every answered
request once.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from pathlib import Path

import httpx

from tests.gateway.keyed_support import MASTER, ServeProcess, wait_for, write_config
from tests.tenancy.spend_support import rows

BURST = 60


def test_item_3_kill_9_right_after_a_burst_loses_no_row(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'spend.db'}"
    config = write_config(
        tmp_path / "llmplex.toml",
        {"gateway": {"database": url, "models": ["mock:echo"]}, "throttle": {"max_attempts": 1}},
    )
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    first = ServeProcess(config, env)

    async def burst() -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=60, headers=MASTER) as http:
            body = {"model": "mock:echo", "messages": [{"role": "user", "content": "count me"}]}
            return list(
                await asyncio.gather(*(http.post(first.url + "/v1/chat/completions", json=body) for _ in range(BURST)))
            )

    lock = sqlite3.connect(tmp_path / "spend.db", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")  # the database takes no write during the burst: rows wait in the journal
    try:
        answers = asyncio.run(burst())
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(30)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
        first.stop()
    assert [a.status_code for a in answers] == [200] * BURST
    answered = {a.headers["x-request-id"] for a in answers}
    assert len(answered) == BURST  # ids unique across processes, so a replay can tell rows apart
    in_database_at_kill = len(rows(url))
    journal = tmp_path / "data" / "llmplex" / "gateway-journal"
    assert list(journal.glob("*/journal-*.jsonl"))  # what the killed process left

    second = ServeProcess(config, env)  # replays the journal at start
    try:
        wait_for(lambda: answered <= {row["request_id"] for row in rows(url)}, timeout=60)
        logged = [row["request_id"] for row in rows(url)]
        assert len(logged) == len(set(logged)) == BURST  # each row once
        lost = BURST - len(answered & set(logged))
        assert lost == 0
        wait_for(lambda: len(list(journal.glob("*/journal-*.jsonl"))) <= 1)  # the replayed segment is gone
    finally:
        second.stop()
    print(f"kill -9 after a burst of {BURST}: {in_database_at_kill} rows in the database at the kill, {lost} lost")
