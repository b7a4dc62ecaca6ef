"""Issue 15 item 1: several OS processes (sync and async) share windows and budgets through a real Redis.

Each test runs worker processes (``tests/scaling/worker.py``) against the fake
OpenAI-wire server, which records every request it receives. Counts are exact
where the whole test fits in one window (a window of 60 s; calls over the limit
fail at once because their wait would pass their 10 s deadline); where the
windows roll (1 s), the admissions are checked with a 0.3 s margin for the gap
between the limiter's own timestamp and the worker's clock reading.
"""

from __future__ import annotations

from pathlib import Path

from tests.scaling.harness import openai_config, run_workers, worst_window
from tests.support.fault_server import Fault, FaultServer
from tests.support.redis_server import RedisServer

PROMPT = "x" * 40  # 10 tokens by the estimate (characters / 4)


def jobs(config: dict[str, object], requests: int, timeout: float | None = 10.0, **extra: object) -> list[dict]:
    """Two sync workers and one async worker (4 tasks at once), each making ``requests`` calls."""
    job = {"config": config, "requests": requests, "prompt": PROMPT, "timeout": timeout, **extra}
    return [{**job, "mode": "sync"}, {**job, "mode": "sync"}, {**job, "mode": "async", "concurrency": 4}]


def test_item_1_processes_together_stay_within_the_shared_request_limit(
    tmp_path: Path, redis_server: RedisServer, fault_server: FaultServer
) -> None:
    config = openai_config(fault_server.url, redis_server.url, rate_limit="5/minute")
    outcome = run_workers(tmp_path, jobs(config, requests=4))
    assert outcome.answered == 5, outcome.failures()
    assert fault_server.request_count == 5
    assert worst_window(outcome.admitted, 60) == 5
    # the 7 others were refused at once (their wait, up to a minute, would pass the 10 s deadline)
    assert outcome.errors() == {"LLMRateLimitError"}
    assert all(r["ended"] - r["started"] < 10.0 for r in outcome.results if not r["ok"])


def test_item_1_memory_storage_control_lets_each_process_take_the_whole_limit(
    tmp_path: Path, fault_server: FaultServer
) -> None:
    config = openai_config(fault_server.url, "memory://", rate_limit="3/minute")
    outcome = run_workers(tmp_path, jobs(config, requests=4))
    assert outcome.answered == 9, outcome.failures()  # 3 per process: the limit is exceeded three times over
    assert worst_window(outcome.admitted, 60) == 9 > 3


def test_item_1_waiting_processes_never_exceed_a_rolling_window(
    tmp_path: Path, redis_server: RedisServer, fault_server: FaultServer
) -> None:
    config = openai_config(fault_server.url, redis_server.url, rate_limit="3/second")
    outcome = run_workers(tmp_path, jobs(config, requests=3, timeout=60))
    assert outcome.answered == 9, outcome.failures()
    assert worst_window(outcome.admitted, 1.0 - 0.3) <= 3
    # 9 admissions at 3 per second take at least two whole windows after the first
    assert outcome.admitted[-1] - outcome.admitted[0] >= 2.0 - 0.3
    arrivals = [r.received for r in fault_server.requests]
    assert len(arrivals) == 9 and max(arrivals) - min(arrivals) >= 2.0 - 0.3


def test_item_1_memory_storage_control_exceeds_a_rolling_window(tmp_path: Path, fault_server: FaultServer) -> None:
    config = openai_config(fault_server.url, "memory://", rate_limit="3/second")
    outcome = run_workers(tmp_path, jobs(config, requests=3, timeout=60))
    assert outcome.answered == 9, outcome.failures()
    assert worst_window(outcome.admitted, 1.0) > 3


def test_item_1_processes_share_the_token_rate_limit(
    tmp_path: Path, redis_server: RedisServer, fault_server: FaultServer
) -> None:
    # each call is estimated at 10 prompt tokens + max_tokens 10 = 20, and reports exactly that
    fault_server.default = Fault.ok(usage=_usage(10, 10))
    config = openai_config(fault_server.url, redis_server.url, token_rate_limit="100/minute")
    outcome = run_workers(tmp_path, jobs(config, requests=4, max_tokens=10))
    assert outcome.answered == 5, outcome.failures()
    assert fault_server.request_count == 5
    assert outcome.errors() == {"LLMRateLimitError"}

    control = run_workers(tmp_path, jobs({**config, "limits": {"storage": "memory://"}}, requests=4, max_tokens=10))
    assert control.answered == 12, control.failures()  # every process alone fits 5, so each sends all 4


def test_item_1_processes_share_the_budget_of_the_config(
    tmp_path: Path, redis_server: RedisServer, fault_server: FaultServer
) -> None:
    fault_server.default = Fault.ok(usage=_usage(10, 10))
    config = {
        **openai_config(fault_server.url, redis_server.url),
        "budget": {"max_requests": 7, "max_total_tokens": 1000, "name": "shared-test"},
    }
    outcome = run_workers(tmp_path, jobs(config, requests=4, max_tokens=10))
    assert outcome.answered == 7, outcome.failures()
    assert fault_server.request_count == 7
    assert outcome.errors() == {"LLMBudgetExceededError"}

    from llmplex.reliability.shared_budget import SharedBudgetTracker

    seen = SharedBudgetTracker(storage=redis_server.url, name="shared-test").snapshot()
    assert (seen.requests, seen.total_tokens) == (7, 140)


def test_item_1_processes_share_a_token_budget_and_never_pass_it(
    tmp_path: Path, redis_server: RedisServer, fault_server: FaultServer
) -> None:
    fault_server.default = Fault.ok(usage=_usage(10, 10))
    config = {**openai_config(fault_server.url, redis_server.url), "budget": {"max_total_tokens": 100}}
    outcome = run_workers(tmp_path, jobs(config, requests=4, max_tokens=10))
    # each reserves its estimate (20) before it is sent: 5 fit, whatever the processes' interleaving
    assert outcome.answered == 5, outcome.failures()
    assert outcome.errors() <= {"LLMBudgetExceededError", "LLMDeadlineExceededError"}

    control = run_workers(tmp_path, jobs({**config, "limits": {"storage": "memory://"}}, requests=4, max_tokens=10))
    assert control.answered == 12, control.failures()


def _usage(input_tokens: int, output_tokens: int) -> object:
    from tests.contract.fixtures_openai import TokenUsage

    return TokenUsage(input_tokens, output_tokens)
