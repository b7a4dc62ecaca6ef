"""Fallbacks: tried in order once the primary's retries are exhausted on a retryable error."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import pytest

import llmplex
from llmplex import (
    BudgetTracker,
    FallbackUsed,
    LLMBadRequestError,
    LLMConfigurationError,
    LLMConnectionError,
    LLMRateLimitError,
    LLMServerError,
    RequestFailed,
    hookimpl,
)
from llmplex.providers.mock import MockBackend
from tests.reliability.fakes import FakeTime, Recorder

CHAIN = {"mock:primary": ["backup:b", "third:c"]}


def _setup(**overrides: object) -> tuple[llmplex.Client, dict[str, MockBackend], Recorder, FakeTime]:
    time = FakeTime(draw=0.0)
    recorder = Recorder()
    settings: dict[str, object] = {
        "providers": {"backup": {"plugin": "mock"}, "third": {"plugin": "mock"}},
        "fallbacks": CHAIN,
        "throttle": {"max_attempts": 2},
        **overrides,
    }
    client = llmplex.Client(settings, clock=time.clock(), plugins=[recorder])
    backends = {name: client.provider_client(name) for name in ("mock", "backup", "third")}
    return client, backends, recorder, time


def test_the_first_fallback_answers_after_the_primary_exhausts_its_retries() -> None:
    client, backends, recorder, _ = _setup()
    backends["mock"].push_error(LLMRateLimitError("429"))
    backends["mock"].push_error(LLMServerError("503"))
    backends["backup"].push("from backup")
    response = client.complete("mock:primary", "x")
    assert (response.text, response.provider, response.model, response.attempts) == ("from backup", "backup", "b", 3)
    assert [len(b.calls) for b in backends.values()] == [2, 1, 0]
    assert backends["backup"].calls[0]["model"] == "b"
    [used] = recorder.of(FallbackUsed)
    assert (used.failed_model, used.provider, used.model) == ("mock:primary", "backup", "b")
    assert used.error_type == "LLMServerError"
    assert recorder.of(RequestFailed) == []


def test_fallbacks_are_tried_in_order_and_the_final_error_carries_every_attempt() -> None:
    client, backends, recorder, _ = _setup()
    errors = {
        "mock": [LLMServerError("p1"), LLMServerError("p2")],
        "backup": [LLMConnectionError("b1"), LLMConnectionError("b2")],
        "third": [LLMRateLimitError("t1"), LLMRateLimitError("t2")],
    }
    for name, errs in errors.items():
        for error in errs:
            backends[name].push_error(error)
    with pytest.raises(LLMRateLimitError, match="t2") as info:
        client.complete("mock:primary", "x")
    assert info.value.attempts == 6
    assert [(f.model, f.attempt, f.error.message) for f in info.value.context["errors"]] == [
        ("mock:primary", 1, "p1"), ("mock:primary", 2, "p2"),
        ("backup:b", 1, "b1"), ("backup:b", 2, "b2"),
        ("third:c", 1, "t1"), ("third:c", 2, "t2"),
    ]  # fmt: skip
    assert [e.failed_model for e in recorder.of(FallbackUsed)] == ["mock:primary", "backup:b"]
    [failed] = recorder.of(RequestFailed)
    assert (failed.attempt, failed.provider, failed.error_type) == (6, "third", "LLMRateLimitError")


def test_a_non_retryable_error_never_falls_back() -> None:
    client, backends, recorder, _ = _setup()
    backends["mock"].push_error(LLMBadRequestError("invalid", status_code=400))
    with pytest.raises(LLMBadRequestError):
        client.complete("mock:primary", "x")
    assert len(backends["backup"].calls) == 0 and recorder.of(FallbackUsed) == []


def test_per_call_fallbacks_replace_the_config() -> None:
    client, backends, _, _ = _setup()
    for _ in range(2):
        backends["mock"].push_error(LLMServerError("down"))
    assert client.complete("mock:primary", "x", fallbacks=["third:direct"]).provider == "third"
    for _ in range(2):
        backends["mock"].push_error(LLMServerError("down"))
    with pytest.raises(LLMServerError):
        client.complete("mock:primary", "x", fallbacks=[])
    for _ in range(2):
        backends["mock"].push_error(LLMServerError("down"))
    answer = client.complete("mock:other", "x", fallbacks={"mock:other": ["backup:table"]})
    assert (answer.provider, answer.model) == ("backup", "table")


def test_fallbacks_are_found_through_an_alias_and_for_the_routed_model() -> None:
    client, backends, _, _ = _setup(aliases={"fast": "mock:primary"})
    for _ in range(2):
        backends["mock"].push_error(LLMServerError("down"))
    assert client.complete("fast", "x").provider == "backup"


async def test_async_and_streaming_calls_fall_back_too() -> None:
    client, backends, _, _ = _setup()
    for _ in range(2):
        backends["mock"].push_error(LLMServerError("down"))
    assert (await client.acomplete("mock:primary", "async answer")).provider == "backup"
    for _ in range(2):
        backends["mock"].push_error(LLMServerError("down"))
    events = [e async for e in client.astream("mock:primary", "a b")]
    assert events[-1].response is not None and events[-1].response.provider == "backup"
    for _ in range(2):
        backends["mock"].push_error(LLMServerError("down"))
    events = await asyncio.to_thread(lambda: list(client.stream("mock:primary", "c d")))
    assert [e.text for e in events if e.type == "text"] == ["c", " d"]
    assert events[-1].response is not None and events[-1].response.provider == "backup"


def test_fallbacks_share_the_budget() -> None:
    client, backends, _, _ = _setup()
    tracker = BudgetTracker(llmplex.Budget(max_requests=3))
    for _ in range(2):
        backends["mock"].push_error(LLMServerError("down"))
    backends["backup"].push_error(LLMServerError("down"))
    with pytest.raises(llmplex.LLMBudgetExceededError):
        client.complete("mock:primary", "x", budget=tracker)
    assert tracker.snapshot().requests == 3 and len(backends["third"].calls) == 0


class SlowCalls:
    """Every attempt takes ``seconds`` of fake time."""

    def __init__(self, time: FakeTime, seconds: float) -> None:
        self.time, self.seconds = time, seconds

    @hookimpl(wrapper=True)
    def llmplex_call(self) -> Generator[None, Any, Any]:
        self.time.now += self.seconds
        return (yield)


def test_no_fallback_starts_once_the_deadline_has_passed() -> None:
    client, backends, _, time = _setup()
    client.host.register_observer(SlowCalls(time, 3.0))
    for _ in range(2):
        backends["mock"].push_error(LLMServerError("down"))
    with pytest.raises(LLMServerError) as info:
        client.complete("mock:primary", "x", timeout=5)
    assert info.value.attempts == 2 and len(backends["backup"].calls) == 0


def test_an_unusable_fallback_is_a_configuration_error_naming_it() -> None:
    client, backends, _, _ = _setup(fallbacks={"mock:primary": ["nosuch:model"]})
    for _ in range(2):
        backends["mock"].push_error(LLMServerError("down"))
    with pytest.raises(LLMConfigurationError, match="fallback 'nosuch:model' of 'mock:primary' cannot be used") as info:
        client.complete("mock:primary", "x")
    assert isinstance(info.value.__cause__, LLMServerError)
    assert [f.model for f in info.value.context["errors"]] == ["mock:primary", "mock:primary", "nosuch:model"]


def test_bad_fallback_settings_name_the_problem(client: llmplex.Client) -> None:
    with pytest.raises(LLMConfigurationError, match="lists itself as its own fallback"):
        llmplex.Client(fallbacks={"mock:a": ["mock:a"]})
    with pytest.raises(LLMConfigurationError, match=r"key 'fallbacks\.\"mock:a\"': expected an array"):
        llmplex.Client(fallbacks={"mock:a": "mock:b"})
    with pytest.raises(LLMConfigurationError, match=r"fallbacks must be a list of model names"):
        client.complete("mock:m", "x", fallbacks="mock:b")
    with pytest.raises(LLMConfigurationError, match=r"fallbacks\['mock:m'\] must be a list of model names"):
        client.complete("mock:m", "x", fallbacks={"mock:m": [""]})
