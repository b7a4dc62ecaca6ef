"""Issue 34 item 5 (the start of every stream): a stream starts from one unreported usage built once, not a
``Usage`` built for each stream (``Usage.unreported()``, 0.5 µs). A ``Usage`` is frozen and pricing copies it, so
a stream that reports no usage still answers with an unknown usage of its own values, priced as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex.engine import assembly
from llmplex.engine.assembly import StreamAssembler
from llmplex.types import Usage
from tests.platform.site import install_providers


@pytest.fixture
def llm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> llmplex.Client:
    """``foldstream:``: a stream of three text events and no usage (``test_item_4_core_stream_contained``)."""
    install_providers(tmp_path, monkeypatch, {"foldstream": "tests.speed.test_item_4_core_stream_contained"})
    return llmplex.Client()


def test_item_5_core_no_usage_is_built_when_a_stream_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Any] = []
    unreported = Usage.unreported

    def counted() -> Usage:
        built.append(1)
        return unreported()

    monkeypatch.setattr(Usage, "unreported", counted)
    first, second = StreamAssembler("p", "m"), StreamAssembler("p", "m")
    assert built == []
    assert first.usage is second.usage is assembly._UNREPORTED


async def test_item_5_core_a_stream_reporting_no_usage_answers_with_an_unknown_usage(llm: llmplex.Client) -> None:
    responses = []
    for _ in range(2):
        events = [event async for event in llm.astream("foldstream:m", "fine")]
        assert "".join(event.text or "" for event in events) == "one two three"
        responses.append(events[-1].response)
    for response in responses:
        assert response is not None
        assert response.usage == Usage.unreported() and not response.usage.reported
        assert response.usage.cost_usd is None
    assert StreamAssembler("p", "m").usage == Usage.unreported()  # no stream changed the one they start from
