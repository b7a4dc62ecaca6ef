"""Retries through the public API on the mock provider: exact counts, waits and events, sync, async and streaming."""

from __future__ import annotations

import logging

import pytest

import llmplex
from llmplex import (
    LLMBadRequestError,
    LLMConnectionError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMServerError,
    LLMTimeoutError,
    PromptExecuted,
    RequestFailed,
    Throttled,
)
from llmplex.providers.mock import MockBackend
from tests.reliability.fakes import FakeTime, Recorder


def _client(time: FakeTime, **overrides: object) -> tuple[llmplex.Client, MockBackend, Recorder]:
    recorder = Recorder()
    client = llmplex.Client(clock=time.clock(), plugins=[recorder], **overrides)
    return client, client.provider_client("mock"), recorder


RETRYABLE = [
    lambda: LLMRateLimitError("429", status_code=429),
    lambda: LLMServerError("503", status_code=503),
    lambda: LLMTimeoutError("slow"),
    lambda: LLMConnectionError("reset"),
    lambda: TimeoutError("raw timeout from an SDK"),
    lambda: ConnectionResetError("raw reset from an SDK"),
]


@pytest.mark.parametrize("make", RETRYABLE)
def test_retryable_failure_is_retried_until_max_attempts_with_exact_waits(make: object) -> None:
    time = FakeTime(draw=0.5)
    client, backend, recorder = _client(time)
    for _ in range(5):
        backend.push_error(make())  # type: ignore[operator]
    with pytest.raises(llmplex.LLMError) as info:
        client.complete("mock:m", "x")
    assert info.value.retryable and info.value.attempts == 5
    assert len(backend.calls) == 5
    assert time.sleeps == [0.25, 0.5, 1.0, 2.0]
    assert info.value.context["gave_up"] == "max_attempts (5) reached"
    throttled = recorder.of(Throttled)
    assert [(e.attempt, e.delay, e.reason) for e in throttled] == [
        (n, d, type(info.value).__name__) for n, d in zip([1, 2, 3, 4], [0.25, 0.5, 1.0, 2.0], strict=True)
    ]
    [failed] = recorder.of(RequestFailed)
    assert (failed.attempt, failed.error_type, failed.retryable) == (5, type(info.value).__name__, True)


@pytest.mark.parametrize(
    "error",
    [
        LLMQuotaExhaustedError("insufficient_quota", status_code=429),
        LLMBadRequestError("invalid parameter", status_code=400),
        LLMBadRequestError("invalid api key", status_code=401),
        LLMRefusalError("refused", refusal="I can't help with that"),
    ],
)
def test_non_retryable_failure_is_sent_once(error: llmplex.LLMError) -> None:
    time = FakeTime()
    client, backend, recorder = _client(time)
    backend.push_error(error)
    with pytest.raises(type(error)) as info:
        client.complete("mock:m", "x")
    assert info.value is error and (error.attempts, error.retryable) == (1, False)
    assert len(backend.calls) == 1 and time.sleeps == [] and recorder.of(Throttled) == []
    assert error.context["gave_up"] == "not retryable"


def test_success_after_retries_reports_attempts_and_latency_from_the_injected_clock() -> None:
    time = FakeTime(draw=0.0)
    client, backend, recorder = _client(time)
    backend.push_error(LLMRateLimitError("429", retry_after=1.25))
    backend.push_error(LLMServerError("502", headers={"retry-after-ms": "300"}))
    backend.push("ok", usage={"input_tokens": 4, "output_tokens": 1})
    response = client.complete("mock:m", "x")
    assert (response.text, response.attempts) == ("ok", 3)
    assert time.sleeps == [1.25, 0.3]
    assert response.latency == pytest.approx(1.55)
    assert recorder.kinds() == [
        "RequestStarted", "PromptRendered", "Throttled",
        "RequestStarted", "PromptRendered", "Throttled",
        "RequestStarted", "PromptRendered", "PromptExecuted", "CallEnded",
    ]  # fmt: skip
    [executed] = recorder.of(PromptExecuted)
    assert executed.attempt == 3 and executed.usage.total_tokens == 5 and executed.latency == pytest.approx(1.55)


def test_max_total_delay_stops_the_retries_and_raises_the_last_error_at_once() -> None:
    time = FakeTime(draw=0.0)
    client, backend, _ = _client(time, throttle={"max_total_delay": 5})
    backend.push_error(LLMRateLimitError("first", retry_after=3))
    backend.push_error(LLMRateLimitError("second", retry_after=3))
    with pytest.raises(LLMRateLimitError, match="second") as info:
        client.complete("mock:m", "x")
    assert time.sleeps == [3] and info.value.attempts == 2
    assert "max_total_delay" in info.value.context["gave_up"]


async def test_async_retries_match_sync() -> None:
    time = FakeTime(draw=0.5)
    client, backend, _ = _client(time)
    for _ in range(3):
        backend.push_error(LLMServerError("529 overloaded", status_code=529))
    response = await client.acomplete("mock:echo", "async")
    assert (response.text, response.attempts, time.sleeps) == ("async", 4, [0.25, 0.5, 1.0])


def test_stream_retries_before_the_first_event() -> None:
    time = FakeTime(draw=0.5)
    client, backend, _ = _client(time)
    backend.push_error(LLMServerError("500"))
    backend.push_error(LLMConnectionError("reset"))
    events = list(client.stream("mock:echo", "a b"))
    assert [e.text for e in events if e.type == "text"] == ["a", " b"]
    assert events[-1].response is not None and events[-1].response.attempts == 3
    assert time.sleeps == [0.25, 0.5]


async def test_astream_gives_up_like_complete() -> None:
    time = FakeTime(draw=0.5)
    client, backend, _ = _client(time, throttle={"max_attempts": 2})
    backend.push_error(LLMServerError("500"))
    backend.push_error(LLMServerError("500 again"))
    with pytest.raises(LLMServerError, match="again") as info:
        [e async for e in client.astream("mock:echo", "a b")]
    assert info.value.attempts == 2 and time.sleeps == [0.25]


def test_every_attempt_error_is_kept_on_the_final_error() -> None:
    time = FakeTime()
    client, backend, _ = _client(time, throttle={"max_attempts": 3})
    errors = [LLMServerError("one"), LLMTimeoutError("two"), LLMBadRequestError("three")]
    for error in errors:
        backend.push_error(error)
    with pytest.raises(LLMBadRequestError) as info:
        client.complete("mock:m", "x")
    kept = info.value.context["errors"]
    assert [(f.model, f.attempt, f.error) for f in kept] == [("mock:m", n, e) for n, e in enumerate(errors, 1)]


def test_log_records_carry_the_event_fields(caplog: pytest.LogCaptureFixture) -> None:
    time = FakeTime(draw=0.5)
    client, backend, _ = _client(time, throttle={"max_attempts": 2})
    backend.push_error(LLMRateLimitError("429"))
    backend.push_error(LLMRateLimitError("429"))
    with caplog.at_level(logging.DEBUG, logger="llmplex"), pytest.raises(LLMRateLimitError):
        client.complete("mock:m", "x")
    records = {r.getMessage(): r for r in caplog.records if r.name == "llmplex"}
    assert list(records) == [
        "prompt.call.start", "prompt.rendered", "prompt.throttled", "prompt.error", "prompt.call.done"
    ]  # fmt: skip
    throttled = records["prompt.throttled"].llmplex  # type: ignore[attr-defined]
    assert throttled == {
        "event": "prompt.throttled", "request_id": throttled["request_id"], "provider": "mock", "model": "m",
        "attempt": 1, "delay": 0.25, "reason": "LLMRateLimitError",
    }  # fmt: skip
    assert records["prompt.throttled"].levelno == logging.INFO
    error = records["prompt.error"]
    assert error.levelno == logging.WARNING
    assert error.llmplex["error_type"] == "LLMRateLimitError"  # type: ignore[attr-defined]
    assert error.llmplex["gave_up"] == "max_attempts (2) reached"  # type: ignore[attr-defined]


def test_prompt_rendered_payload_is_redacted() -> None:
    time = FakeTime()
    client, _, recorder = _client(time)
    secret = "sk-proj-abcdefghijklmnop1234"
    client.complete("mock:m", f"my key is {secret}", provider_options={"api_key": secret, "safe": "visible"})
    [rendered] = recorder.of(llmplex.PromptRendered)
    assert secret not in repr(rendered.payload)
    assert rendered.payload["provider_options"] == {"api_key": "***", "safe": "visible"}
