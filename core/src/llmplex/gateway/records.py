"""What the gateway hands on about each finished request: a ``RequestRecord`` to every ``Recorder``.

A request is finished when its answer is sent whole, when the last event of a
stream is sent, or when it failed (the client vanishing mid-stream included).
Recorders run on the event loop and must not block it: one that writes
somewhere queues the record and writes in batches off the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from llmplex.types import Usage

__all__ = ["Recorder", "RequestRecord"]


@dataclass(frozen=True)
class RequestRecord:
    """One finished request.

    ``model_asked`` is the model string the client sent; ``provider`` and ``model``
    are who answered (after aliases and fallbacks), empty when nobody did.
    ``cost_usd`` is ``None`` when unknown (``cost_note`` says why). ``status`` is the
    HTTP status sent (200 for a stream that failed after its headers: ``error_type``
    says it failed). ``latency`` is seconds from the request's arrival to its end.
    ``usage_estimated``: a stream that ended before the provider reported its usage is
    charged an estimate (``cost_note`` says so).
    """

    request_id: str
    endpoint: str
    key_name: str
    model_asked: str
    provider: str
    model: str
    stream: bool
    status: int
    error_type: str | None
    usage: Usage | None
    cost_usd: Decimal | None
    cost_note: str | None
    latency: float
    started_at: float
    usage_estimated: bool = False

    def lasting(self, latency: float) -> RequestRecord:
        """This record with ``latency`` (a copy of its fields: ``dataclasses.replace`` costs five times more)."""
        record = object.__new__(RequestRecord)
        record.__dict__.update(self.__dict__, latency=latency)
        return record


class Recorder(Protocol):
    """Receives every finished request; must return at once (queue, then write off the hot path).

    A recorder may also have ``journal(record)`` and ``async settle(record)``: called once per request before
    its answer's last byte goes out (the spend log writes the request's row to its local journal, then gives
    back what the request held, so that the client's next request finds its room).
    """

    def record(self, record: RequestRecord) -> None:
        """Take one finished request."""
        ...
