"""Issue 34 item 5: a request's spend row is built with less work, the same row.

``request_row`` made the row's ``created_at`` as ``datetime.fromtimestamp(started_at, UTC).replace(tzinfo=None)``
(``replace`` alone cost more than the rest of the row) and read the usage columns with a ``getattr`` each into a
second dict. Now ``created_at`` is the epoch plus the seconds (rounded to the microsecond as ``fromtimestamp``
rounds) and the columns are set directly: the same keys in the same order, the same values.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest

from llmplex.gateway.records import RequestRecord
from llmplex.gateway.spend import log as spend_log
from llmplex.gateway.spend.log import request_row
from llmplex.store.journal import decode_row, encode_row
from llmplex.store.schema import USAGE_COLUMNS
from tests.speed.gateway_records import record


def former_row(rec: RequestRecord) -> dict[str, Any]:
    """``request_row`` as it was (bodies aside)."""
    ok = rec.error_type is None and rec.status < 400
    row: dict[str, Any] = {
        "created_at": datetime.fromtimestamp(rec.started_at, UTC).replace(tzinfo=None),
        "request_id": rec.request_id,
        "model_asked": rec.model_asked[:255],
        "provider": rec.provider[:128],
        "model": rec.model[:255],
        "status": "ok" if ok else "error",
        "error_type": rec.error_type,
        "options": {"endpoint": rec.endpoint, "http_status": rec.status, "stream": rec.stream},
        "cost_usd": rec.cost_usd,
        "cost_note": rec.cost_note,
        "latency": rec.latency,
        "cached": False,
        "key_name": rec.key_name[:255] or None,
    }
    if rec.usage is not None:
        row.update({name: getattr(rec.usage, name) for name in USAGE_COLUMNS})
    if rec.usage_estimated:
        row["options"]["usage_estimated"] = True
    return row


RECORDS = [
    record(),
    record(usage=None, cost_usd=None, cost_note="no price", status=502, error_type="upstream"),
    record(status=404),
    record(stream=True, usage_estimated=True, cost_note="estimated"),
    record(key_name="", model_asked="m" * 400, provider="p" * 200, model="x" * 300),
    record(started_at=0.0),
    record(started_at=1764780000.9999996),  # rounds up into the next second
]


@pytest.mark.parametrize("rec", RECORDS)
def test_item_5_the_row_is_the_same_keys_values_and_journal_line(rec: RequestRecord) -> None:
    row, former = request_row(rec), former_row(rec)
    assert list(row.items()) == list(former.items())
    assert type(row["created_at"]) is datetime and row["created_at"].tzinfo is None
    assert encode_row(row) == encode_row(former)
    assert decode_row(encode_row(row)) == decode_row(encode_row(former))


def test_item_5_created_at_rounds_as_fromtimestamp_did() -> None:
    chance = random.Random(34)
    for _ in range(5_000):
        started = chance.uniform(1.5e9, 2.5e9)
        assert request_row(record(started_at=started))["created_at"] == datetime.fromtimestamp(started, UTC).replace(
            tzinfo=None
        )


def test_item_5_the_row_makes_no_aware_datetime(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoFromTimestamp(datetime):
        @classmethod
        def fromtimestamp(cls, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("an aware datetime and its replace for each row")

    monkeypatch.setattr(spend_log, "datetime", NoFromTimestamp)
    assert request_row(record())["created_at"] == former_row(record())["created_at"]
