"""Issue 15 item 1, in one process: limits config, waits and their events, settlement, concurrency, storage errors."""

from __future__ import annotations

import asyncio
import shutil
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex import hookimpl
from llmplex.reliability.storage import LimitsStorageWarning
from tests.contract.fixtures_openai import TokenUsage
from tests.reliability.fakes import Recorder
from tests.support.fault_server import Fault, FaultServer
from tests.support.redis_server import REDIS_MISSING, RedisServer, free_port

MODEL = "openai:gpt-4o-mini"


def client(server: FaultServer, storage: str = "memory://", **limits: Any) -> tuple[llmplex.Client, Recorder]:
    recorder = Recorder()
    config = {
        "providers": {"openai": {"base_url": server.url, "api_key": "test-key", **limits}},
        "limits": {"storage": storage},
        "throttle": {"max_attempts": 1},
    }
    return llmplex.Client(config, plugins=[recorder]), recorder


def test_item_1_redis_server_is_installed_for_these_tests() -> None:
    assert shutil.which("redis-server"), REDIS_MISSING


def test_item_1_a_wait_for_the_window_is_announced_by_a_throttled_event(fault_server: FaultServer) -> None:
    llm, recorder = client(fault_server, rate_limit="2/3 seconds")
    for _ in range(3):
        llm.complete(MODEL, "hi")
    (event,) = recorder.of(llmplex.Throttled)  # the third waited for the first to leave the window
    assert event.reason == "rate_limit"
    assert 0 < event.delay <= 3.0
    assert event.attempt == 1 and event.provider == "openai"
    assert fault_server.request_count == 3


def test_item_1_a_wait_that_would_pass_the_deadline_is_raised_at_once(fault_server: FaultServer) -> None:
    llm, recorder = client(fault_server, rate_limit="1/minute")
    llm.complete(MODEL, "hi")
    began = time.monotonic()
    with pytest.raises(llmplex.LLMRateLimitError) as caught:
        llm.complete(MODEL, "hi", timeout=20)
    assert time.monotonic() - began < 10  # not after waiting out the 20 s deadline (slack for a busy machine)
    error = caught.value
    assert "providers.openai.rate_limit" in error.message and "deadline" in error.message
    assert 30 < error.retry_after <= 60
    assert (error.provider, error.model, error.attempts) == ("openai", "gpt-4o-mini", 0)
    assert fault_server.request_count == 1
    assert not recorder.of(llmplex.Throttled)


def test_item_1_a_wait_that_would_pass_the_deadline_is_raised_at_once_async(fault_server: FaultServer) -> None:
    llm, _ = client(fault_server, rate_limit="1/minute")

    async def main() -> float:
        await llm.acomplete(MODEL, "hi")
        began = time.monotonic()
        with pytest.raises(llmplex.LLMRateLimitError):
            await llm.acomplete(MODEL, "hi", timeout=20)
        return time.monotonic() - began

    assert asyncio.run(main()) < 10  # not after waiting out the 20 s deadline
    assert fault_server.request_count == 1


def test_item_1_a_rate_limited_model_falls_back_to_the_next(fault_server: FaultServer) -> None:
    llm, _ = client(fault_server, rate_limit="1/minute")
    llm.complete(MODEL, "hi")
    answer = llm.complete(MODEL, "hi", timeout=5, fallbacks=["mock:echo"])
    assert answer.provider == "mock"


def test_item_1_tokens_used_beyond_the_estimate_are_charged_after_the_answer(fault_server: FaultServer) -> None:
    # estimate: 10 prompt tokens + max_tokens 10 = 20; each answer reports 40
    fault_server.default = Fault.ok(usage=TokenUsage(10, 30))
    llm, _ = client(fault_server, token_rate_limit="100/minute")
    answered = 0
    for _ in range(5):
        try:
            llm.complete(MODEL, "x" * 40, max_tokens=10, timeout=5)
            answered += 1
        except llmplex.LLMRateLimitError:
            pass
    # 20 + 20 extra, twice (80), then 20 fits (100) and its extra 20 is owed: the fourth needs 40
    assert answered == 3


def test_item_1_a_request_larger_than_the_token_window_is_a_configuration_error(fault_server: FaultServer) -> None:
    llm, _ = client(fault_server, token_rate_limit="50/minute")
    with pytest.raises(llmplex.LLMConfigurationError, match="token_rate_limit"):
        llm.complete(MODEL, "x" * 400, max_tokens=10)
    assert fault_server.request_count == 0


class InFlight:
    """Observer: the most attempts admitted and not yet answered at once."""

    def __init__(self) -> None:
        self.now = self.most = 0

    @llmplex.hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        if isinstance(event, llmplex.RequestStarted):
            self.now += 1
            self.most = max(self.most, self.now)
        elif isinstance(event, llmplex.PromptExecuted):
            self.now -= 1


def most_in_flight(limits: dict[str, Any]) -> tuple[int, Recorder]:
    """8 concurrent calls of 0.1 s each to the mock with these limits: the most in flight, and the events."""
    recorder, counter = Recorder(), InFlight()
    llm = llmplex.Client({"providers": {"mock": limits}}, plugins=[recorder, counter])
    backend = llm.provider_client("mock")
    for _ in range(8):
        backend.push("slow", delay=0.1)

    async def main() -> None:
        await asyncio.gather(*(llm.acomplete("mock:echo", "hi") for _ in range(8)))

    asyncio.run(main())
    return counter.most, recorder


def test_item_1_max_concurrency_caps_calls_in_flight() -> None:
    most, recorder = most_in_flight({"max_concurrency": 2})
    assert most == 2
    assert {e.reason for e in recorder.of(llmplex.Throttled)} == {"max_concurrency"}
    control, _ = most_in_flight({})
    assert control > 2


def test_item_1_max_concurrency_caps_threads_too() -> None:
    counter = InFlight()
    llm = llmplex.Client({"providers": {"mock": {"max_concurrency": 1}}}, plugins=[counter])
    backend = llm.provider_client("mock")
    for _ in range(4):
        backend.push("slow", delay=0.05)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: llm.complete("mock:echo", "hi"), range(4)))
    assert counter.most == 1


def test_item_1_max_concurrency_counts_every_client_of_the_process() -> None:
    counter = InFlight()
    clients = [llmplex.Client({"providers": {"mock": {"max_concurrency": 1}}}, plugins=[counter]) for _ in range(2)]
    for llm in clients:
        for _ in range(2):
            llm.provider_client("mock").push("slow", delay=0.05)

    async def main() -> None:
        await asyncio.gather(*(llm.acomplete("mock:echo", "hi") for llm in clients for _ in range(2)))

    asyncio.run(main())
    assert counter.most == 1


class _Started:
    """Observer: set once a request is sent (``RequestStarted``)."""

    def __init__(self) -> None:
        self.event: asyncio.Event | None = None

    @hookimpl
    def llmplex_event(self, event: llmplex.Event) -> None:
        if isinstance(event, llmplex.RequestStarted) and self.event is not None:
            self.event.set()


def test_item_1_max_concurrency_waits_within_the_deadline() -> None:
    started = _Started()
    llm = llmplex.Client({"providers": {"mock": {"max_concurrency": 1}}}, plugins=[started])
    backend = llm.provider_client("mock")
    backend.push("slow", delay=1.0)

    async def main() -> list[Any]:
        started.event = asyncio.Event()
        first = asyncio.ensure_future(llm.acomplete("mock:echo", "hi"))
        await started.event.wait()  # the first holds the only slot
        second = llm.acomplete("mock:echo", "hi", timeout=0.2)
        return await asyncio.gather(first, second, return_exceptions=True)

    first, second = asyncio.run(main())
    assert isinstance(first, llmplex.Response)
    assert isinstance(second, llmplex.LLMDeadlineExceededError)
    assert "max_concurrency" in second.message


def test_item_1_limit_keys_are_checked_when_the_config_loads() -> None:
    with pytest.raises(llmplex.LLMConfigurationError, match=r"providers\.openai\.rate_limit.*500/minute"):
        llmplex.Client({"providers": {"openai": {"rate_limit": "lots"}}})
    with pytest.raises(llmplex.LLMConfigurationError, match=r"providers\.openai\.max_concurrency"):
        llmplex.Client({"providers": {"openai": {"max_concurrency": 0}}})
    with pytest.raises(llmplex.LLMConfigurationError, match=r"limits\.storage"):
        llmplex.Client({"limits": {"storage": "mongodb://x"}})
    with pytest.raises(llmplex.LLMConfigurationError, match=r"limits\.on_storage_error"):
        llmplex.Client({"limits": {"on_storage_error": "ignore"}})


def test_item_1_the_token_rate_limit_is_shown_not_masked() -> None:
    with pytest.raises(llmplex.LLMConfigurationError, match='"lots"'):
        llmplex.Client({"providers": {"openai": {"token_rate_limit": "lots"}}})


def test_item_1_unreachable_redis_is_a_connection_error_naming_the_url(fault_server: FaultServer) -> None:
    url = f"redis://:hunter2-secret-pw@127.0.0.1:{free_port()}/0"
    llm, _ = client(fault_server, url, rate_limit="5/minute")  # nothing is opened yet
    with pytest.raises(llmplex.LLMConnectionError) as caught:
        llm.complete(MODEL, "hi")
    text = str(caught.value) + repr(caught.value) + repr(caught.value.context)
    assert "redis://***@127.0.0.1" in text and "on_storage_error" in text
    assert "hunter2" not in text
    assert fault_server.request_count == 0


def test_item_1_unreachable_redis_for_a_shared_budget_is_the_same_error(fault_server: FaultServer) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    config = {
        "providers": {"openai": {"base_url": fault_server.url, "api_key": "test-key"}},
        "limits": {"storage": url},
        "budget": {"max_requests": 3},
    }
    with pytest.raises(llmplex.LLMConnectionError, match=url.replace("/", r"\/").replace(".", r"\.")):
        llmplex.Client(config).complete(MODEL, "hi")


def test_item_1_on_storage_error_local_warns_and_limits_each_process(fault_server: FaultServer) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    llm = llmplex.Client(
        {
            "providers": {"openai": {"base_url": fault_server.url, "api_key": "test-key", "rate_limit": "2/minute"}},
            "limits": {"storage": url, "on_storage_error": "local"},
        }
    )
    with pytest.warns(LimitsStorageWarning, match="per process"):
        llm.complete(MODEL, "hi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, not at every call
        llm.complete(MODEL, "hi")
        with pytest.raises(llmplex.LLMRateLimitError):
            llm.complete(MODEL, "hi", timeout=2)
    assert fault_server.request_count == 2


def test_item_1_sync_and_async_calls_share_the_redis_window(
    fault_server: FaultServer, redis_server: RedisServer
) -> None:
    llm, _ = client(fault_server, redis_server.url, rate_limit="3/minute")
    llm.complete(MODEL, "hi")

    async def main() -> list[Any]:
        return await asyncio.gather(*(llm.acomplete(MODEL, "hi", timeout=5) for _ in range(4)), return_exceptions=True)

    results = asyncio.run(main())
    assert sum(isinstance(r, llmplex.Response) for r in results) == 2
    assert all(isinstance(r, (llmplex.Response, llmplex.LLMRateLimitError)) for r in results)
    other, _ = client(fault_server, redis_server.url, rate_limit="3/minute")  # another client, same window
    with pytest.raises(llmplex.LLMRateLimitError):
        other.complete(MODEL, "hi", timeout=5)


def test_item_1_shared_budget_tracker_counts_for_every_tracker_of_its_name(redis_server: RedisServer) -> None:
    from llmplex.reliability.shared_budget import SharedBudgetTracker

    budget = llmplex.Budget(max_requests=2)
    first = SharedBudgetTracker(budget, storage=redis_server.url, name="job")
    second = SharedBudgetTracker(budget, storage=redis_server.url, name="job")
    other = SharedBudgetTracker(budget, storage=redis_server.url, name="another-job")
    llm = llmplex.Client()
    llm.complete("mock:echo", "hi", budget=first)
    llm.complete("mock:echo", "hi", budget=second)
    with pytest.raises(llmplex.LLMBudgetExceededError):
        llm.complete("mock:echo", "hi", budget=first)
    llm.complete("mock:echo", "hi", budget=other)
    assert first.snapshot().requests == second.snapshot().requests == 2
    assert "job" in repr(first) and redis_server.url in repr(first)


def test_item_1_redis_lost_mid_run_is_the_connection_error_or_the_local_fallback(
    fault_server: FaultServer, tmp_path: Path
) -> None:
    with RedisServer(tmp_path / "raise") as server:
        llm, _ = client(fault_server, server.url, rate_limit="100/minute")
        llm.complete(MODEL, "hi")
        server.stop()
        with pytest.raises(llmplex.LLMConnectionError, match=r"\[limits\] storage redis://127\.0\.0\.1"):
            llm.complete(MODEL, "hi")
    with RedisServer(tmp_path / "local") as server:
        llm = llmplex.Client(
            {
                "providers": {"openai": {"base_url": fault_server.url, "api_key": "k", "rate_limit": "100/minute"}},
                "limits": {"storage": server.url, "on_storage_error": "local"},
            }
        )
        llm.complete(MODEL, "hi")
        server.stop()
        with pytest.warns(LimitsStorageWarning):
            llm.complete(MODEL, "hi")
    assert fault_server.request_count == 3
