"""Item 7 (added latency at 1 in flight): what the gateway's profile found on the request path, held by tests.

Measured with ``bench/gateway.py`` and ``py-spy``: the spend/call log's writer opened, set up, committed
and closed a SQLite connection once per request (about 3 ms of the gateway's CPU and interpreter lock at
1 in flight); answers were written by the standard library's ``json``; and each answer was recorded
(metrics, spend row, access log) before it was sent. Now a steady trickle of rows is written in batches
(the writer waits ``linger`` seconds for more, unless a flush asks for the rows now) on one connection it
keeps open, answers are written by orjson, and an exchange is recorded once its answer is sent.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from sqlalchemy import event

from llmplex.store import CallWriter
from tests.calllog.support import all_rows, sqlite_url


def _row(n: int) -> dict[str, Any]:
    from datetime import UTC, datetime

    return {
        "created_at": datetime.now(UTC).replace(tzinfo=None),
        "model_asked": "mock:m",
        "provider": "mock",
        "model": "m",
        "status": "ok",
        "prompt_text": f"prompt {n}",
        "input_tokens": 1,
        "output_tokens": 1,
        "total_tokens": 2,
        "latency": 0.001,
        "attempts": 1,
        "cached": False,
    }


def test_item_7_a_trickle_of_rows_is_one_transaction_not_one_per_row(tmp_path: Path) -> None:
    batches: list[int] = []
    full = threading.Event()

    def written(count: int) -> None:
        batches.append(count)
        if sum(batches) >= 5:
            full.set()

    writer = CallWriter(sqlite_url(tmp_path), batch_size=5, linger=60.0, on_written=written)
    for n in range(5):
        writer.submit(_row(n))
    assert full.wait(30), "a full batch was not written without a flush"
    assert batches == [5]
    writer.close()
    assert len(all_rows(sqlite_url(tmp_path))) == 5


def test_item_7_a_flush_does_not_wait_for_the_linger(tmp_path: Path) -> None:
    writer = CallWriter(sqlite_url(tmp_path), linger=600.0)
    for n in range(3):
        writer.submit(_row(n))
    assert writer.flush(timeout=60), "flush waited for the 600 s linger instead of cutting it short"
    assert writer.written == 3
    writer.submit(_row(3))  # a flush that ended leaves the linger in force again, and a second flush cuts it too
    assert writer.flush(timeout=60)
    assert writer.written == 4
    writer.close()


def test_item_7_the_writer_keeps_one_connection_across_batches(tmp_path: Path) -> None:
    writer = CallWriter(sqlite_url(tmp_path), linger=0.0)
    writer.submit(_row(0))
    assert writer.flush(timeout=60)
    engine = writer._engine
    assert engine is not None
    opened: list[object] = []
    event.listen(engine, "connect", lambda connection, record: opened.append(connection))
    for n in range(1, 6):
        writer.submit(_row(n))
        assert writer.flush(timeout=60)
    assert writer.written == 6
    assert opened == [], f"{len(opened)} new connections for 5 batches: each batch opened (and closed) its own"
    writer.close()


def test_item_7_answers_are_written_by_orjson_and_big_integers_still_are() -> None:
    """Every answer and stream event goes through ``wire.dumps`` (orjson since item 7's profile); what orjson
    refuses is still written, as the standard library writes it."""
    from llmplex.gateway.wire import dumps

    assert dumps({"text": "héllo ☃", "n": 1, 2: None}) == '{"text":"héllo ☃","n":1,"2":null}'.encode()
    assert dumps({"big": 2**70}) == b'{"big":1180591620717411303424}'


def _chat_scope(body: bytes) -> dict[str, Any]:
    from tests.gateway.harness import MASTER_KEY

    headers = [(b"authorization", f"Bearer {MASTER_KEY}".encode()), (b"content-type", b"application/json")]
    headers.append((b"content-length", str(len(body)).encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/chat/completions",
        "raw_path": b"/v1/chat/completions",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 4000),
    }


def _run_app(send_fails: bool) -> list[str]:
    """One chat request through the gateway's ASGI app: the order of what it sent and what it recorded."""
    import asyncio
    import json

    import llmplex
    from tests.gateway.harness import Gateway, gateway_config

    gateway = Gateway(llmplex.Client(gateway_config()))
    seen: list[str] = []
    gateway.recorder.record = lambda record: seen.append(f"recorded {record.status}")  # type: ignore[method-assign]
    body = json.dumps({"model": "mock:echo", "messages": [{"role": "user", "content": "hi"}]}).encode()
    given = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if given:
            return given.pop()
        await asyncio.sleep(3600)  # a client that stays: no disconnect
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        seen.append(message["type"])
        if send_fails and message["type"] == "http.response.body":
            raise OSError("the client's socket is gone")

    async def run() -> None:
        try:
            await gateway.app(_chat_scope(body), receive, send)
        except OSError:
            seen.append("raised")

    asyncio.run(run())
    return seen


def test_item_7_an_answer_is_recorded_after_it_is_sent() -> None:
    assert _run_app(send_fails=False) == ["http.response.start", "http.response.body", "recorded 200"]


def test_item_7_an_answer_whose_sending_fails_is_recorded_all_the_same() -> None:
    seen = _run_app(send_fails=True)
    assert seen[:3] == ["http.response.start", "http.response.body", "recorded 200"], seen


def test_item_7_a_log_file_deleted_under_the_kept_connection_loses_no_later_row(tmp_path: Path) -> None:
    """The kept-open connection must not write into a deleted (or rotated) file: the next batch opens the
    file at the path again, made and migrated, and the row is there."""
    url = sqlite_url(tmp_path)
    writer = CallWriter(url, linger=0.0)
    writer.submit(_row(0))
    assert writer.flush(timeout=60)
    for leftover in tmp_path.glob("logs.db*"):
        leftover.unlink()
    writer.submit(_row(1))
    assert writer.flush(timeout=60)
    writer.close()
    assert [row["prompt_text"] for row in all_rows(url)] == ["prompt 1"]
