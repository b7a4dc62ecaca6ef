"""Issue 34 item 5: ``llmplex serve``'s protocol checks a request head's limits without looking them up per header.

``GuardedHttpToolsProtocol.on_header`` runs for every header of every request (17 from the openai SDK): it
read ``self.limits.max_header_bytes`` and ``max_header_count`` and went on to uvicorn's ``on_header`` through
``super()`` each time. The head's byte and header budgets are now taken from the limits once per request and
counted down. What must not change: a head exactly at a limit is served, one byte or one header more is
refused with a 431, counted from the URL on, and every request of a connection starts with the whole budget.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import uvicorn
from uvicorn.server import ServerState

from llmplex.gateway.guard.head import GuardedHttpToolsProtocol, HeadLimits
from tests.speed.recording_transport import RecordingTransport


@dataclass(frozen=True)
class CountedLimits(HeadLimits):
    """Head limits counting how often the per-head ones are read."""

    def __getattribute__(self, name: str) -> Any:
        if name in ("max_header_bytes", "max_header_count"):
            reads = object.__getattribute__(self, "reads")
            reads[name] = reads.get(name, 0) + 1
        return object.__getattribute__(self, name)

    @property
    def reads(self) -> dict[str, int]:
        return READS


READS: dict[str, int] = {}


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})


def _request(headers: int, url: str = "/x", value: str = "v") -> bytes:
    lines = "".join(f"h{i:03d}: {value}\r\n" for i in range(headers - 1))
    return f"GET {url} HTTP/1.1\r\nhost: x\r\n{lines}\r\n".encode()


def _served(limits: HeadLimits, *requests: bytes) -> list[bytes]:
    """``requests`` one after the other on one connection; the status line of every answer written."""

    async def run() -> list[bytes]:
        config = uvicorn.Config(_app, log_level="critical", lifespan="off")
        config.head_limits = limits  # type: ignore[attr-defined]
        config.load()
        protocol = GuardedHttpToolsProtocol(config, ServerState(), {})
        transport = RecordingTransport()
        protocol.connection_made(transport)
        for request in requests:
            protocol.data_received(request)
            while protocol.tasks:
                await asyncio.gather(*protocol.tasks)
        protocol.connection_lost(None)
        return [write.split(b"\r\n", 1)[0] for write in transport.writes]

    return asyncio.run(run())


def test_item_5_head_limits_are_read_once_per_request_not_per_header() -> None:
    reads = []
    for headers in (2, 40):
        READS.clear()
        assert _served(CountedLimits(), _request(headers), _request(headers)) == [b"HTTP/1.1 200 OK"] * 2
        reads.append(dict(READS))
    assert reads[0] == reads[1]  # as many reads for 40 headers a request as for 2
    assert reads[1]["max_header_count"] <= 3  # the connection's start and each request's


def test_item_5_head_exactly_at_its_header_count_is_served_one_more_refused() -> None:
    limits = HeadLimits(max_header_count=10)
    assert _served(limits, _request(10), _request(10)) == [b"HTTP/1.1 200 OK", b"HTTP/1.1 200 OK"]
    assert _served(limits, _request(11)) == [b"HTTP/1.1 431 Request Header Fields Too Large"]


def test_item_5_head_exactly_at_its_byte_limit_is_served_one_more_refused() -> None:
    url = "/x"
    size = len(url) + sum(len(f"h{i:03d}") + len("v") + 4 for i in range(3)) + len("host") + len("x") + 4
    limits = HeadLimits(max_header_bytes=size)
    assert _served(limits, _request(4, url), _request(4, url)) == [b"HTTP/1.1 200 OK", b"HTTP/1.1 200 OK"]
    assert _served(limits, _request(4, url + "y")) == [b"HTTP/1.1 431 Request Header Fields Too Large"]
    assert _served(limits, _request(4, url, "vv")) == [b"HTTP/1.1 431 Request Header Fields Too Large"]
