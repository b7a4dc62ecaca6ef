"""Issue 34 item 5: a cached key is read again ahead of its expiry, so no request waits for the lookup.

Every ``key_cache_seconds`` one request per key waited for the key's database lookup on a worker thread (a p99
cost at 1 in flight). Now a request that finds its key's entry in the last quarter of its life is served from it
while one lookup per key (never one per request) reads the key again in the background; a request that finds the
entry past its expiry waits for the lookup as before. The cache's clock is driven by the test (no wall-clock
sleeps). What must not change: a revocation is seen within ``key_cache_seconds`` (at once through ``forget``); a
lookup that fails or hangs leaves one lookup per key and lets the entry expire; shutting down with a refresh in
flight logs nothing.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime
from typing import Any

import pytest

from llmplex.gateway.errors import GatewayError
from llmplex.gateway.keys.auth import KeyAuthenticator
from llmplex.gateway.keys.store import KeyRecord

KEY = "sk-llmplex-refresh-0123456789"
LIFE = 4.0  # key_cache_seconds: an entry read at t is refreshed from t + 3 and expires at t + 4


class Clock:
    """The cache's clock, set by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Store:
    """A key store whose lookups are counted, wait while ``gate`` is clear and may fail or read a revocation."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.gate = threading.Event()
        self.gate.set()
        self.revoked = False
        self.error: Exception | None = None
        self.begun: asyncio.Semaphore | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def watch(self) -> None:
        """Count lookups begun from the running loop (``started``)."""
        self.loop, self.begun = asyncio.get_running_loop(), asyncio.Semaphore(0)

    def find(self, key: str) -> KeyRecord | None:
        self.calls.append(key)
        revoked = datetime.now(UTC).replace(tzinfo=None) if self.revoked else None  # as read when it began
        error = self.error
        if self.loop is not None and self.begun is not None:
            self.loop.call_soon_threadsafe(self.begun.release)
        assert self.gate.wait(30)
        if error is not None:
            raise error
        return KeyRecord(name=f"key-{key[-4:]}", created_at=datetime(2026, 1, 1), revoked_at=revoked)


def authenticator(store: Store, clock: Clock) -> KeyAuthenticator:
    fake: Any = store
    return KeyAuthenticator(None, fake, None, "sk-master-0123456789", LIFE, clock=clock)  # type: ignore[arg-type]


async def started(store: Store) -> None:
    """Wait until one more lookup has begun."""
    assert store.begun is not None
    await asyncio.wait_for(store.begun.acquire(), 30)


async def first_lookup(keys: KeyAuthenticator, store: Store) -> None:
    """Watch the store's lookups, then have ``KEY`` read once (the entry every case starts from)."""
    store.watch()
    await keys.authenticate(KEY)
    await started(store)


async def refused(keys: KeyAuthenticator, key: str = KEY) -> BaseException:
    (outcome,) = await asyncio.gather(keys.authenticate(key), return_exceptions=True)
    assert isinstance(outcome, BaseException)
    return outcome


def test_item_5_a_key_near_expiry_is_served_while_one_lookup_refreshes_it() -> None:
    store, clock = Store(), Clock()
    keys = authenticator(store, clock)

    async def run() -> None:
        await first_lookup(keys, store)  # read at t0: refreshed from t0 + 3, expires at t0 + 4
        t0 = clock.now
        clock.now = t0 + 2.9
        await keys.authenticate(KEY)
        assert len(store.calls) == 1  # not yet in the last quarter
        store.gate.clear()  # the refresh hangs in its thread
        clock.now = t0 + 3.5
        callers = await asyncio.gather(*(keys.authenticate(KEY) for _ in range(64)))  # none waits for it
        assert {caller.name for caller in callers} == {"key-6789"}
        await started(store)
        assert len(store.calls) == 2  # one refresh, not one per request
        clock.now = t0 + 4.5  # past the first entry's expiry: these wait for the refresh begun at t0 + 3.5
        waiting = [asyncio.ensure_future(keys.authenticate(KEY)) for _ in range(8)]
        await asyncio.sleep(0)
        assert not any(task.done() for task in waiting)
        store.gate.set()
        assert {caller.name for caller in await asyncio.gather(*waiting)} == {"key-6789"}
        assert len(store.calls) == 2
        clock.now = t0 + 3.5 + 2.9  # the refreshed entry, read at t0 + 3.5, still fresh
        await keys.authenticate(KEY)
        assert len(store.calls) == 2

    asyncio.run(run())


def test_item_5_an_expired_entry_is_looked_up_on_the_request_path() -> None:
    store, clock = Store(), Clock()
    keys = authenticator(store, clock)

    async def run() -> None:
        await first_lookup(keys, store)
        clock.now += LIFE  # no request in the last quarter: the entry just expired
        store.gate.clear()
        waiting = asyncio.ensure_future(keys.authenticate(KEY))
        await started(store)
        assert not waiting.done()
        store.gate.set()
        assert (await waiting).name == "key-6789"
        assert len(store.calls) == 2

    asyncio.run(run())


def test_item_5_a_revocation_is_seen_within_the_cache_life() -> None:
    store, clock = Store(), Clock()
    keys = authenticator(store, clock)

    async def run() -> None:
        await first_lookup(keys, store)
        t0 = clock.now
        clock.now = t0 + 3.2
        store.revoked = True  # revoked through `llmplex keys` at t0 + 3.2
        clock.now = t0 + 3.5
        assert (await keys.authenticate(KEY)).name == "key-6789"  # read at t0, before the revocation
        await started(store)
        clock.now = t0 + LIFE  # within key_cache_seconds of the revocation
        outcome = await refused(keys)
        assert isinstance(outcome, GatewayError) and outcome.status == 401
        assert len(store.calls) == 2

    asyncio.run(run())


def test_item_5_a_revocation_through_admin_during_a_refresh_is_seen_at_once() -> None:
    store, clock = Store(), Clock()
    keys = authenticator(store, clock)

    async def run() -> None:
        await first_lookup(keys, store)
        store.gate.clear()
        clock.now += 3.5
        await keys.authenticate(KEY)  # starts a refresh that reads the key as it was
        await started(store)
        store.revoked = True
        keys.forget("key-6789")  # /admin in this worker: the refresh begun before is neither joined nor cached
        store.gate.set()
        outcome = await refused(keys)
        assert isinstance(outcome, GatewayError) and outcome.status == 401
        assert len(store.calls) == 3

    asyncio.run(run())


def test_item_5_a_failing_refresh_lets_the_entry_expire() -> None:
    store, clock = Store(), Clock()
    keys = authenticator(store, clock)
    caught: list[dict[str, Any]] = []

    async def run() -> None:
        store.watch()
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: caught.append(context))
        await keys.authenticate(KEY)
        await started(store)
        t0 = clock.now
        store.error = RuntimeError("the database broke")
        store.gate.clear()
        clock.now = t0 + 3.5
        for _ in range(16):  # served from the entry; one failing refresh at a time
            assert (await keys.authenticate(KEY)).name == "key-6789"
        await started(store)
        assert len(store.calls) == 2
        store.gate.set()
        clock.now = t0 + 3.9
        assert (await keys.authenticate(KEY)).name == "key-6789"  # the failure reaches no request in time
        clock.now = t0 + LIFE  # expired as before: the request waits for a lookup, and its failure
        outcome = await refused(keys)
        assert isinstance(outcome, RuntimeError)
        store.error = None
        assert (await keys.authenticate(KEY)).name == "key-6789"  # nothing failed was cached

    asyncio.run(run())
    assert caught == []  # every failed refresh's exception retrieved, none logged


def test_item_5_many_keys_take_one_refresh_each() -> None:
    store, clock = Store(), Clock()
    keys = authenticator(store, clock)
    names = [f"sk-llmplex-many-{n:04d}" for n in range(50)]

    async def run() -> None:
        store.watch()
        await asyncio.gather(*(keys.authenticate(name) for name in names))
        assert len(store.calls) == 50
        store.gate.clear()
        clock.now += 3.5
        for _ in range(10):  # none waits: every key is served from its entry
            await asyncio.gather(*(keys.authenticate(name) for name in names))
        assert len(asyncio.all_tasks()) <= 1 + 50  # this test's own, and one refresh per key
        store.gate.set()
        for _ in range(100):
            await started(store)
        assert sorted(store.calls[50:]) == names  # one refresh per key, not one per request

    asyncio.run(run())


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_item_5_shutting_down_with_a_refresh_in_flight_logs_nothing() -> None:
    store, clock = Store(), Clock()
    keys = authenticator(store, clock)
    caught: list[dict[str, Any]] = []

    async def run() -> None:
        store.watch()
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: caught.append(context))
        await keys.authenticate(KEY)
        await started(store)
        store.gate.clear()
        clock.now += 3.5
        await keys.authenticate(KEY)
        await started(store)
        store.gate.set()  # the loop ends now, with the refresh still waiting for its thread

    asyncio.run(run())
    assert caught == []
    assert len(store.calls) == 2
