"""Issue 25 item 1 on PostgreSQL: the same migrations, writer, queries and async engine on a real server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import inspect, text

import llmplex
from llmplex.store import (
    CallFilter,
    async_engine,
    conversation_messages,
    cost_totals,
    open_database,
    recent_calls,
)
from tests.support.postgres_server import postgres_url


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    with postgres_url() as url:
        yield url


def test_item_1_postgres_logs_searches_totals_and_continues(postgres: str) -> None:
    client = llmplex.Client(log=postgres)
    first = client.complete("mock:echo", "herons wade in 100% of marshes")
    turn = llmplex.Message.user
    client.complete("mock:echo", [turn("herons wade in 100% of marshes"), first.message(), turn("more?")])
    backend = client.provider_client("mock")
    backend.push_error(llmplex.LLMBadRequestError("no", status_code=400))
    with pytest.raises(llmplex.LLMBadRequestError):
        client.complete("mock:echo", "fails")
    assert client.call_log is not None and client.call_log.flush(60)
    engine = open_database(postgres)
    try:
        with engine.connect() as connection:
            assert {"calls", "virtual_keys", "alembic_version"} <= set(inspect(connection).get_table_names())
        rows = recent_calls(engine, CallFilter(), 10)
        assert [r["status"] for r in rows] == ["error", "ok", "ok"]
        assert rows[1]["conversation_id"] == rows[2]["conversation_id"]  # the second turn joined the first
        found = recent_calls(engine, CallFilter(query="100% HERONS"), 10)  # every word, any case
        assert [r["text"] for r in found] == ["herons wade in 100% of marshes"]
        assert recent_calls(engine, CallFilter(query="1000%"), 10) == []  # % is a character, not a wildcard
        today = datetime.now(UTC)
        since = CallFilter(since=today - timedelta(hours=1), status="ok")
        [day] = cost_totals(engine, "day", since)
        assert day.group == today.strftime("%Y-%m-%d") and day.calls == 2 and day.cost_usd is None
        assert day.unpriced == 2
        messages, model = conversation_messages(engine, str(rows[1]["conversation_id"]))
        assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"] and model == "mock:echo"
    finally:
        engine.dispose()

    async def count() -> int:
        engine = async_engine(postgres)
        async with engine.connect() as connection:
            total = (await connection.execute(text("SELECT count(*) FROM calls"))).scalar_one()
        await engine.dispose()
        return int(total)

    assert asyncio.run(count()) == 3
