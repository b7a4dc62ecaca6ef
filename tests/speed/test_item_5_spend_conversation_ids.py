"""Issue 34 item 5: the spend shipper draws the conversation ids of a batch's rows at once.

A gateway row has no conversation of its own; the shipper gives each one a fresh id, which cost a ``uuid4`` (an
``os.urandom`` call and a ``UUID`` object, about 4 us) a row. A batch now draws its ids with one
``secrets.token_hex``: 32 hex digits (128 random bits) a row, every row's its own; a row's own id is kept.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from sqlalchemy import select

from llmplex.store import shipping
from llmplex.store.database import open_database
from llmplex.store.schema import calls
from tests.speed.gateway_records import numbered_row


def test_item_5_a_batch_draws_its_conversation_ids_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    draws: list[int] = []
    draw = secrets.token_hex

    def token_hex(nbytes: int) -> str:
        draws.append(nbytes)
        return draw(nbytes)

    monkeypatch.setattr(shipping.secrets, "token_hex", token_hex)
    rows = [numbered_row("conv", number) for number in range(5)]
    rows[2]["conversation_id"] = "conv-of-its-own"
    engine = open_database(f"sqlite:///{tmp_path / 'spend.db'}", writer=True)
    try:
        with engine.begin() as connection:
            assert shipping._insert_new(connection, rows, set()) == 5
            query = select(calls.c.request_id, calls.c.conversation_id)
            stored = {request_id: cid for request_id, cid in connection.execute(query)}
    finally:
        engine.dispose()
    assert len(draws) == 1
    assert stored.pop("req-conv-2") == "conv-of-its-own"
    drawn = list(stored.values())
    assert len(set(drawn)) == 4
    assert all(len(cid) == 32 and int(cid, 16) >= 0 for cid in drawn)
