"""Fixtures shared by the speed tests of issue 34."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from llmplex.engine.pipeline import Pipeline


@pytest.fixture
def closed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The pipelines released, in order, as ``close`` beside the recorder's event names (the one-model call and
    stream tests: a call's events come before its route's release)."""
    from llmplex_testplugins import recorder

    recorder.EVENTS.clear()
    order: list[str] = []
    real = Pipeline.close

    def close(self: Pipeline) -> None:
        order.extend(type(e).__name__ for e in list(recorder.EVENTS)[len(order) - order.count("close") :])
        order.append("close")
        real(self)

    monkeypatch.setattr(Pipeline, "close", close)
    yield order
    recorder.EVENTS.clear()
