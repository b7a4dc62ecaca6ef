"""Issue 34 item 3: core's start of a call, async and sync.

A call to a model used before starts at once: no function is made to hand to ``Client._first_use`` (the deadline's
hold over a first use, which loads observers and the provider plugin), which a first use still goes through.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import llmplex
from llmplex.client import Client
from llmplex.errors import LLMDeadlineExceededError
from llmplex.reliability.deadline import Deadline


def _first_uses(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    used: list[str | None] = []
    real = Client._first_use

    def spy(self: Client, model: str | None, *args: Any) -> Any:
        used.append(model)
        return real(self, model, *args)

    monkeypatch.setattr(Client, "_first_use", spy)
    return used


def test_item_3_core_a_model_used_before_starts_its_call_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    used = _first_uses(monkeypatch)
    with llmplex.Client() as llm:
        assert llm.complete("mock:echo", "one").text.endswith("one")
        assert used == ["mock:echo"], "the first use is held to the deadline"
        assert llm.complete("mock:echo", "two").text.endswith("two")
        assert asyncio.run(llm.acomplete("mock:echo", "three")).text.endswith("three")
        assert [event.type for event in llm.stream("mock:echo", "four")][-1] == "response"
    assert used == ["mock:echo"], "later calls start at once"


def test_item_3_core_a_first_use_is_still_held_to_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first use of each model (and of the default one) goes through ``_first_use``, which holds it to the call's
    deadline (the next test)."""
    used = _first_uses(monkeypatch)
    with llmplex.Client(default_model="mock:echo") as llm:
        assert llm.complete(None, "default").text.endswith("default")
        assert llm.complete("mock:echo", "named").text.endswith("named")
        assert llm.complete("mock:other", "another model").text.endswith("another model")
    assert used == [None, "mock:other"]


def test_item_3_core_a_first_use_past_its_deadline_loads_nothing() -> None:
    passed = Deadline.after(0.5, since=time.monotonic() - 60)
    with llmplex.Client() as llm:
        with pytest.raises(LLMDeadlineExceededError, match="while loading the provider plugin for 'mock:echo'"):
            llm.complete("mock:echo", "late", deadline=passed)
        assert llm.complete("mock:echo", "in time").text.endswith("in time")
        with pytest.raises(LLMDeadlineExceededError, match="before the request could be sent") as caught:
            llm.complete("mock:echo", "late again", deadline=passed)
    assert "loading" not in str(caught.value), "used before: nothing to load"
