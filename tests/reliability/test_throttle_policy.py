"""ThrottlePolicy decisions, Retry-After parsing, and where a policy comes from (defaults, config, provider, call)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

import llmplex
from llmplex import (
    LLMBadRequestError,
    LLMConfigurationError,
    LLMConnectionError,
    LLMQuotaExhaustedError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMServerError,
    LLMTimeoutError,
    ThrottlePolicy,
)
from llmplex.retry_after import requested_wait
from tests.reliability.fakes import FakeTime


def test_defaults_match_the_issue() -> None:
    assert ThrottlePolicy() == ThrottlePolicy(max_attempts=5, base_delay=0.5, max_delay=8.0, max_total_delay=30.0)


@pytest.mark.parametrize(("attempt", "ceiling"), [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 8.0), (6, 8.0), (9, 8.0)])
def test_backoff_ceiling_doubles_up_to_max_delay(attempt: int, ceiling: float) -> None:
    policy = ThrottlePolicy(max_attempts=100, max_total_delay=1000)
    error = LLMServerError("503")
    assert policy.decide(error, attempt, 0.0, 0.0).delay == 0.0  # full jitter: the draw scales from zero
    assert policy.decide(error, attempt, 0.0, 0.5).delay == pytest.approx(ceiling / 2)
    assert policy.decide(error, attempt, 0.0, 0.999999).delay == pytest.approx(ceiling, rel=1e-5)


@pytest.mark.parametrize(
    "error",
    [LLMRateLimitError("429"), LLMServerError("529"), LLMTimeoutError("slow"), LLMConnectionError("reset")],
)
def test_retryable_errors_get_a_wait(error: llmplex.LLMError) -> None:
    decision = ThrottlePolicy().decide(error, 1, 0.0, 0.5)
    assert decision.delay == 0.25 and decision.reason == "retryable"


@pytest.mark.parametrize(
    "error",
    [
        LLMQuotaExhaustedError("insufficient_quota", status_code=429),
        LLMBadRequestError("bad", status_code=400),
        LLMBadRequestError("auth", status_code=401),
        LLMRefusalError("no"),
        llmplex.LLMError("unknown"),
    ],
)
def test_non_retryable_errors_are_never_retried(error: llmplex.LLMError) -> None:
    assert ThrottlePolicy().decide(error, 1, 0.0, 0.5) == (None, "not retryable")


def test_max_attempts_counts_the_first_attempt() -> None:
    policy = ThrottlePolicy(max_attempts=3)
    assert policy.decide(LLMServerError("x"), 2, 0.0, 0.5).delay is not None
    assert policy.decide(LLMServerError("x"), 3, 0.0, 0.5) == (None, "max_attempts (3) reached")


def test_retry_after_is_the_minimum_wait_but_not_a_maximum() -> None:
    policy = ThrottlePolicy()
    assert policy.decide(LLMRateLimitError("x", retry_after=3.0), 1, 0.0, 0.5).delay == 3.0
    assert policy.decide(LLMRateLimitError("x", retry_after=0.1), 4, 0.0, 0.5).delay == 2.0  # backoff is longer


def test_a_wait_past_max_total_delay_is_not_started() -> None:
    decision = ThrottlePolicy(max_total_delay=5.0).decide(LLMRateLimitError("x", retry_after=2.0), 2, 3.5, 0.0)
    assert decision.delay is None and "max_total_delay" in decision.reason


def test_a_wait_past_the_deadline_is_not_started() -> None:
    decision = ThrottlePolicy().decide(LLMRateLimitError("x", retry_after=2.0), 1, 0.0, 0.0, remaining=1.5)
    assert decision.delay is None and "deadline" in decision.reason


def test_requested_wait_reads_headers_when_the_classifier_did_not() -> None:
    def wait(headers: dict[str, str]) -> float | None:
        return requested_wait(None, headers, now=lambda: 1_700_000_000.0)

    assert wait({"Retry-After": "7"}) == 7.0
    assert wait({"retry-after-ms": "250"}) == 0.25
    assert wait({"retry-after-ms": "250", "retry-after": "9"}) == 0.25  # the precise header wins
    assert wait({"retry-after": "-3"}) == 0.0
    assert wait({"retry-after": "soon"}) is None
    assert wait({}) is None
    moment = datetime.fromtimestamp(1_700_000_000, UTC) + timedelta(seconds=42)
    assert wait({"Retry-After": format_datetime(moment, usegmt=True)}) == pytest.approx(42.0)
    assert requested_wait(1.5, {"retry-after": "9"}) == 1.5


def test_rate_limit_and_server_errors_take_their_wait_from_the_headers() -> None:
    assert LLMRateLimitError("x", headers={"retry-after-ms": "250"}).retry_after == 0.25
    assert LLMServerError("503", status_code=503, headers={"Retry-After": "7"}).retry_after == 7.0
    assert LLMRateLimitError("x", retry_after=1.5, headers={"retry-after": "9"}).retry_after == 1.5
    assert LLMServerError("503", status_code=503).retry_after is None


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"max_attempts": 0}, "max_attempts must be a whole number >= 1"),
        ({"max_attempts": 2.5}, "max_attempts"),
        ({"base_delay": -1}, "base_delay must be a finite number"),
        ({"max_delay": float("inf")}, "max_delay"),
        ({"max_total_delay": "30"}, "max_total_delay"),
    ],
)
def test_bad_policy_values_are_configuration_errors(fields: dict[str, object], problem: str) -> None:
    with pytest.raises(LLMConfigurationError, match=problem):
        ThrottlePolicy(**fields)  # type: ignore[arg-type]


def _sleeps_for(client: llmplex.Client, time: FakeTime, model: str = "mock:m", **kwargs: object) -> list[float]:
    backend = client.provider_client(model.partition(":")[0])
    for _ in range(10):
        backend.push_error(LLMServerError("503"))
    with pytest.raises(LLMServerError):
        client.complete(model, "x", **kwargs)  # type: ignore[arg-type]
    sleeps, time.sleeps[:] = list(time.sleeps), []
    backend.reset()
    return sleeps


def test_policy_precedence_defaults_config_provider_call() -> None:
    time = FakeTime(draw=0.5)
    client = llmplex.Client(
        clock=time.clock(),
        throttle={"max_attempts": 3, "base_delay": 1.0, "providers": {"backup": {"max_attempts": 2, "base_delay": 4}}},
        providers={"backup": {"plugin": "mock"}},
    )
    assert _sleeps_for(client, time) == [0.5, 1.0]  # [throttle]
    assert _sleeps_for(client, time, "backup:m") == [2.0]  # [throttle.providers.backup]
    assert _sleeps_for(client, time, throttle={"max_attempts": 4}) == [0.5, 1.0, 2.0]  # call mapping over config
    assert _sleeps_for(client, time, "backup:m", throttle={"base_delay": 0.1}) == [0.05]  # over the provider's
    assert _sleeps_for(client, time, throttle=ThrottlePolicy(max_attempts=2)) == [0.25]  # a policy replaces all
    assert _sleeps_for(client, time, throttle={"max_attempts": 1}) == []  # retries off


def test_default_policy_and_env_var_for_a_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    time = FakeTime(draw=0.0)
    assert _sleeps_for(llmplex.Client(clock=time.clock()), time) == [0.0] * 4  # 5 attempts by default
    monkeypatch.setenv("LLMPLEX_THROTTLE__PROVIDERS__MOCK__MAX_ATTEMPTS", "2")
    assert _sleeps_for(llmplex.Client(clock=time.clock()), time) == [0.0]


def test_bad_throttle_settings_name_the_problem() -> None:
    with pytest.raises(LLMConfigurationError, match=r"throttle\.providers\.mock\.max_attempts"):
        llmplex.Client(throttle={"providers": {"mock": {"max_attempts": 0}}})
    with pytest.raises(LLMConfigurationError, match=r"throttle\.providers\.mock\.retries.*no such key"):
        llmplex.Client(throttle={"providers": {"mock": {"retries": 3}}})
    client = llmplex.Client()
    with pytest.raises(LLMConfigurationError, match="unknown throttle setting 'retries'; valid settings: max_attempts"):
        client.complete("mock:m", "x", throttle={"retries": 3})
    with pytest.raises(LLMConfigurationError, match="throttle must be a ThrottlePolicy or a mapping"):
        client.complete("mock:m", "x", throttle=3)  # type: ignore[typeddict-item]
