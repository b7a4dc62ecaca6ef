"""Issue 34 item 5: the spend shipper's conversation ids: drawn once a batch, and in the order they were shipped.

A gateway row has no conversation of its own; the shipper gives each one a fresh id, which cost a ``uuid4`` (an
``os.urandom`` call and a ``UUID`` object) a row, and put each row of a batch in another place of the index of
conversation ids (random keys: a page of the index touched for every row). An id is now the second its row was
shipped (8 hex digits) then 128 random bits (32 hex digits), the batch's bits drawn with one ``secrets.token_hex``:
a batch's ids land side by side in the index, every row's its own; a row's own id is kept.
"""

from __future__ import annotations

import secrets
import time
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
        before = int(time.time())
        with engine.begin() as connection:
            assert shipping._insert_new(connection, rows, set()) == 5
            query = select(calls.c.request_id, calls.c.conversation_id)
            stored = {request_id: cid for request_id, cid in connection.execute(query)}
        after = int(time.time())
    finally:
        engine.dispose()
    assert len(draws) == 1
    assert stored.pop("req-conv-2") == "conv-of-its-own"
    drawn = list(stored.values())
    assert all(len(cid) == 40 and int(cid, 16) >= 0 for cid in drawn)
    assert len({cid[8:] for cid in drawn}) == 4  # 128 random bits each, every row's its own
    assert len({cid[:8] for cid in drawn}) == 1  # the batch's second: side by side in the index
    assert before <= int(drawn[0][:8], 16) <= after
