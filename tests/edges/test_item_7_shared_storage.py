"""Issue 21 item 7: shared storage (a real redis-server) never outlives the call's deadline — frozen with
SIGSTOP included — and never blocks an event loop; per-loop Redis clients are closed with their loop and with
the client; the URL's password is shown nowhere; a wrong password says so."""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import llmplex
from llmplex.reliability.storage import LimitsStorageWarning, LimitsStore, opened_store, store_for
from llmplex.testing.loop_lag import LoopLag
from tests.support.fault_server import FaultServer
from tests.support.fixtures import fault_server, redis_server, redis_session
from tests.support.late import Late
from tests.support.redis_server import RedisServer, free_port

__all__ = ["fault_server", "redis_server", "redis_session"]

MODEL = "openai:gpt-4o-mini"
SLACK = 1.5  # seconds a call may run past its deadline on its own account (the old behaviour took 8-20 s more)


@pytest.fixture
def frozen_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test alone (it gets paused), stopped after."""
    with RedisServer(tmp_path / "redis") as server:
        yield server


def _client(server: FaultServer, storage: str, *, budget: bool = False, **limits: Any) -> llmplex.Client:
    config: dict[str, Any] = {
        "providers": {"openai": {"base_url": server.url, "api_key": "test-key", **limits}},
        "limits": {"storage": storage},
        "throttle": {"max_attempts": 1},
    }
    if budget:
        config["budget"] = {"max_requests": 1000, "name": f"edges-{free_port()}"}
    return llmplex.Client(config)


def _timed(fn: Any) -> tuple[float, BaseException | None]:
    """How long ``fn()`` (a call with ``timeout=1.0``) ran past its deadline on its own account, and its error."""
    late = Late.after(1.0)
    try:
        fn()
    except BaseException as exc:
        return late.seconds(), exc
    return late.seconds(), None


@pytest.mark.parametrize("shared", ["rate_limit", "budget"])
@pytest.mark.parametrize("when", ["before first use", "mid-run"])
def test_item_7_a_frozen_redis_never_outlives_the_deadline_sync(
    fault_server: FaultServer, frozen_redis: RedisServer, shared: str, when: str
) -> None:
    limits = {"rate_limit": "1000/minute"} if shared == "rate_limit" else {}
    llm = _client(fault_server, frozen_redis.url, budget=shared == "budget", **limits)
    if when == "mid-run":
        llm.complete(MODEL, "hi")  # the warm-up: plugin, SDK and Redis loaded before the clock
    else:  # the client and its Redis storage are used first under the clock; the SDK's cold import (no deadline
        # can cut an import short: 1.7 s of it on a loaded machine once) is not what this test times
        importlib.import_module("llmplex_openai")
        importlib.import_module("openai")
    frozen_redis.pause()
    try:
        overrun, error = _timed(lambda: llm.complete(MODEL, "hi", timeout=1.0))
    finally:
        frozen_redis.resume()
    assert isinstance(error, llmplex.LLMDeadlineExceededError), repr(error)
    assert overrun < SLACK, overrun
    assert "[limits] storage redis://127.0.0.1" in str(error) or "deadline reached" in str(error)
    assert fault_server.request_count == (1 if when == "mid-run" else 0)  # nothing sent while frozen


@pytest.mark.parametrize("shared", ["rate_limit", "budget"])
def test_item_7_a_frozen_redis_never_outlives_the_deadline_nor_blocks_the_loop_async(
    fault_server: FaultServer, frozen_redis: RedisServer, shared: str
) -> None:
    limits = {"rate_limit": "1000/minute"} if shared == "rate_limit" else {}
    llm = _client(fault_server, frozen_redis.url, budget=shared == "budget", **limits)

    async def main() -> tuple[float, BaseException | None, float]:
        await llm.acomplete(MODEL, "hi")  # the warm-up, unbounded
        frozen_redis.pause()
        async with LoopLag() as lag:
            late = Late.after(1.0)
            late.on_loop()
            try:
                await llm.acomplete(MODEL, "hi", timeout=1.0)
                error = None
            except BaseException as exc:
                error = exc
            overrun = late.seconds()
        await llm.aclose()
        return overrun, error, lag.worst

    try:
        overrun, error, worst_lag = asyncio.run(main())
    finally:
        frozen_redis.resume()
    assert isinstance(error, llmplex.LLMDeadlineExceededError), repr(error)
    assert overrun < SLACK, overrun
    assert worst_lag < 0.5, f"the event loop was held {worst_lag:.2f}s by a Redis call"
    assert fault_server.request_count == 1


def test_item_7_first_use_from_async_code_connects_off_the_loop(
    fault_server: FaultServer, frozen_redis: RedisServer
) -> None:
    """The very first use (connect and PING) of a frozen Redis from async code: the loop keeps running."""
    llm = _client(fault_server, frozen_redis.url, rate_limit="1000/minute")
    frozen_redis.pause()

    async def main() -> tuple[BaseException | None, float]:
        async with LoopLag() as lag:
            try:
                await llm.acomplete(MODEL, "hi", timeout=1.0)
            except BaseException as exc:
                return exc, lag.worst
        return None, lag.worst

    try:
        error, worst_lag = asyncio.run(main())
    finally:
        frozen_redis.resume()
    assert isinstance(error, llmplex.LLMDeadlineExceededError) and worst_lag < 0.5, (error, worst_lag)


def test_item_7_a_call_after_redis_thaws_works_again(fault_server: FaultServer, frozen_redis: RedisServer) -> None:
    llm = _client(fault_server, frozen_redis.url, budget=True, rate_limit="1000/minute")
    llm.complete(MODEL, "hi")  # the warm-up, unbounded
    frozen_redis.pause()
    with pytest.raises(llmplex.LLMDeadlineExceededError):
        llm.complete(MODEL, "hi", timeout=0.5)
    frozen_redis.resume()
    assert llm.complete(MODEL, "hi", timeout=10).text


def _redis_clients(server: RedisServer) -> int:
    import redis

    return len(redis.Redis.from_url(server.url).client_list()) - 1  # without this one


def test_item_7_per_loop_redis_clients_close_with_their_loop(
    fault_server: FaultServer, redis_server: RedisServer
) -> None:
    llm = _client(fault_server, redis_server.url, rate_limit="1000/minute")
    llm.complete(MODEL, "hi")  # the sync client (process-wide) exists from here on
    baseline = _redis_clients(redis_server)
    store = opened_store(llm.config.limits)
    assert store is not None
    for _ in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()  # what earlier tests left to the collector is not this loop's
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            asyncio.run(llm.acomplete(MODEL, "hi"))  # a new loop each time
            gc.collect()
        assert len(store._async) == 0
        assert _redis_clients(redis_server) == baseline  # its connections were closed before the loop


def test_item_7_per_loop_redis_clients_close_with_the_client(
    fault_server: FaultServer, redis_server: RedisServer
) -> None:
    llm = _client(fault_server, redis_server.url, rate_limit="1000/minute")
    llm.complete(MODEL, "hi")
    baseline = _redis_clients(redis_server)

    async def main() -> tuple[int, int]:
        await llm.acomplete(MODEL, "hi")
        store = opened_store(llm.config.limits)
        assert store is not None and len(store._async) == 1
        opened = _redis_clients(redis_server)
        await llm.aclose()  # the loop still runs: its Redis client is closed now, not at shutdown
        return opened, len(store._async)

    opened, left = asyncio.run(main())
    assert opened > baseline and left == 0
    assert _redis_clients(redis_server) == baseline

    async def sync_close() -> int:
        await llm.acomplete(MODEL, "hi")
        llm.close()  # from inside the loop: closed once control returns to it
        await asyncio.sleep(0.05)
        store = opened_store(llm.config.limits)
        assert store is not None
        return len(store._async)

    assert asyncio.run(sync_close()) == 0


SECRET = "Hunter2-limits-Pw-7781"


def test_item_7_the_redis_password_appears_in_no_repr_dump_error_or_log(
    fault_server: FaultServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with RedisServer(tmp_path / "auth", password=SECRET) as server:
        assert SECRET in server.url
        llm = _client(fault_server, server.url, budget=True, rate_limit="1000/minute")
        llm.complete(MODEL, "hi")
        asyncio.run(llm.acomplete(MODEL, "hi"))
        store = store_for(llm.config.limits)
        from llmplex.reliability.shared_budget import SharedBudgetTracker

        shown = [
            repr(llm.config),
            repr(llm.config.limits),
            str(llm.config.limits.model_dump(mode="json")),
            llm.config.model_dump_json(),
            repr(store),
            repr(SharedBudgetTracker(storage=server.url)),
            *(r.getMessage() for r in caplog.records),
        ]
        server.stop()
        with pytest.raises(llmplex.LLMConnectionError) as lost:
            llm.complete(MODEL, "hi", timeout=10)
        shown += [str(lost.value), repr(lost.value), repr(lost.value.context)]
    for text in shown:
        assert SECRET not in text, text
    assert any("redis://***@127.0.0.1" in text for text in shown)
    dumped = llm.config.limits.model_dump()["storage"]  # masked when shown, the URL inside: it rebuilds a client
    assert SECRET not in str(dumped) and dumped.get_secret_value() == server.url


@pytest.mark.parametrize("policy", ["raise", "local"])
def test_item_7_a_wrong_redis_password_says_it_is_a_wrong_password(
    fault_server: FaultServer, tmp_path: Path, policy: str
) -> None:
    with RedisServer(tmp_path / "auth", password=SECRET) as server:
        for url, says in (
            (server.url.replace(SECRET, "not-the-password"), "wrong password"),
            (server.url.replace(f":{SECRET}@", ""), "needs a password and the URL gives none"),
        ):
            config = {
                "providers": {"openai": {"base_url": fault_server.url, "api_key": "k", "rate_limit": "9/minute"}},
                "limits": {"storage": url, "on_storage_error": policy},
            }
            with warnings.catch_warnings():
                warnings.simplefilter("error", LimitsStorageWarning)  # no fallback: a password is not an outage
                with pytest.raises(llmplex.LLMAuthenticationError, match=says) as caught:
                    llmplex.Client(config).complete(MODEL, "hi", timeout=10)
            assert "not-the-password" not in str(caught.value) and SECRET not in str(caught.value)
            assert caught.value.attempts == 0
    assert fault_server.request_count == 0


def test_item_7_limits_store_repr_masks_the_password() -> None:
    store = LimitsStore(f"redis://:{SECRET}@127.0.0.1:{free_port()}/0")
    assert SECRET not in repr(store) and "redis://***@127.0.0.1" in repr(store)
