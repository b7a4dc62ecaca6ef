"""Issue 34 item 5: the record of a finished request is the journaled one with its final latency, copied
field by field (``RequestRecord.lasting``) instead of through ``dataclasses.replace``: the same record."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from llmplex.gateway.records import RequestRecord
from llmplex.types import Usage


def test_item_5_a_record_with_its_latency_is_the_record_replace_made() -> None:
    usage = Usage(input_tokens=3, output_tokens=5)
    journaled = RequestRecord(
        "req_1", "chat.completions", "k", "m", "p", "m", True, 200, None, usage, Decimal("0.1"), None, 0.01, 1.5, True
    )
    lasting = journaled.lasting(0.25)
    assert lasting == dataclasses.replace(journaled, latency=0.25)
    assert lasting is not journaled and journaled.latency == 0.01 and lasting.usage is usage
    with pytest.raises(dataclasses.FrozenInstanceError):
        lasting.latency = 1.0  # type: ignore[misc]
