"""Issue 34 item 5: a key's status is checked on every request; the clock is read only for a key that expires
(``datetime.now`` was 0.6 % of the gateway's samples). The statuses are the same."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from llmplex.gateway.keys import store
from llmplex.gateway.keys.store import KeyRecord

MADE = datetime(2026, 1, 1)


def test_item_5_a_key_without_an_expiry_reads_no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_clock() -> datetime:
        raise AssertionError("the clock was read")

    monkeypatch.setattr(store, "_now", no_clock)
    assert KeyRecord(name="k", created_at=MADE).status() == "active"
    assert KeyRecord(name="k", created_at=MADE, revoked_at=MADE).status() == "revoked"


def test_item_5_a_key_that_expires_is_read_against_the_clock() -> None:
    now = store._now()
    assert KeyRecord(name="k", created_at=MADE, expires_at=now + timedelta(hours=1)).status() == "active"
    assert KeyRecord(name="k", created_at=MADE, expires_at=now - timedelta(seconds=1)).status() == "expired"
    later = KeyRecord(name="k", created_at=MADE, expires_at=now + timedelta(hours=1))
    assert later.status(now + timedelta(hours=2)) == "expired"
    gone = KeyRecord(name="k", created_at=MADE, expires_at=now - timedelta(seconds=1), revoked_at=MADE)
    assert gone.status() == "revoked"
