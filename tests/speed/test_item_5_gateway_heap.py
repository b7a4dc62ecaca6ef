"""Issue 34 item 5: a gateway worker's heap is frozen and its collector's thresholds raised once it started.

With Python's thresholds (700, 10, 10) the objects of the requests in flight outlived the young collections and
made the oldest generation collect in full every few seconds: the whole heap of the worker's start-up, 9 % of
its CPU at 64 in flight (``gc.callbacks`` timing, load 10). ``app_from_environment`` (what ``llmplex serve``
and uvicorn's factory build) now ends the application's start-up (after its warm-up) with ``gc.freeze`` and
``GC_THRESHOLDS``; what the application's own lifespan does, and its state, are unchanged.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette

from llmplex.gateway import keyed, server


def lifespan_events(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Run the start-up and shutdown of ``app_from_environment``'s application over a recording lifespan."""
    events: list[Any] = []

    @asynccontextmanager
    async def warm(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        events.append("warmed up")
        yield {"ready": True}
        events.append("shut down")

    monkeypatch.setattr(server, "Client", lambda: None)
    monkeypatch.setattr(server, "master_key", lambda: "sk-master")
    monkeypatch.setattr(server, "_configure_logging", lambda: None)  # the test process's logging stays as it is
    monkeypatch.setattr(keyed, "keyed_app", lambda client, key: Starlette(lifespan=warm))

    def collect(*args: Any) -> int:
        events.append("collect")
        return 0

    monkeypatch.setattr(gc, "collect", collect)
    monkeypatch.setattr(gc, "freeze", lambda: events.append("freeze"))
    monkeypatch.setattr(gc, "set_threshold", lambda *args: events.append(("threshold", args)))
    app = server.app_from_environment()
    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    scope: dict[str, Any] = {"type": "lifespan", "state": {}}

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: dict[str, Any]) -> None:
        events.append(message["type"])

    anyio.run(app, scope, receive, send)
    events.append(scope["state"])
    return events


def test_item_5_a_worker_freezes_its_heap_and_raises_the_thresholds_after_its_warm_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert lifespan_events(monkeypatch) == [
        "warmed up",
        "collect",
        "freeze",
        ("threshold", server.GC_THRESHOLDS),
        "lifespan.startup.complete",
        "shut down",
        "lifespan.shutdown.complete",
        {"ready": True},
    ]
    assert server.GC_THRESHOLDS[0] > gc.get_threshold()[0]  # this process's own collector left as it was
