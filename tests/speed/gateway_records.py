"""The gateway's finished-request records the spend and metrics tests build: ``record`` (one, any field changed) and
``numbered_row`` (the spend row of the ``number``-th request of a series)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from llmplex.gateway.records import RequestRecord
from llmplex.gateway.spend.log import request_row
from llmplex.types import Usage


def record(**fields: Any) -> RequestRecord:
    """A priced chat completion of key ``team-a`` (every token kind counted), with ``fields`` changed."""
    base: dict[str, Any] = {
        "request_id": "req-1",
        "endpoint": "chat.completions",
        "key_name": "team-a",
        "model_asked": "fast",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "stream": False,
        "status": 200,
        "error_type": None,
        "usage": Usage(input_tokens=12, output_tokens=30, cached_tokens=4, cache_write_tokens=1, reasoning_tokens=2),
        "cost_usd": Decimal("0.0000123"),
        "cost_note": None,
        "latency": 0.0123,
        "started_at": 1764780000.123456,
    }
    return RequestRecord(**{**base, **fields})


def numbered_row(series: str, number: int) -> dict[str, Any]:
    """The spend row of request ``req-{series}-{number}`` (``number`` output tokens, started ``number`` s apart)."""
    return request_row(
        record(
            request_id=f"req-{series}-{number}",
            usage=Usage(input_tokens=3, output_tokens=number),
            cost_usd=Decimal("0.0000012345"),
            latency=0.01,
            started_at=1764780000.5 + number,
        )
    )
