"""Issue 34 item 5: the requests that find a key's cached lookup expired share one database lookup.

At 64 in flight, every request arriving while the first one's lookup was in its thread started its own (an
SQLite connection and query each, on the default executor's threads). Now one lookup per key runs at a time
and every request waiting for that key gets its answer. What must not change: a revocation through ``forget``
(``/admin``) is seen by the next request, not hidden behind a lookup begun before it; a request that leaves
does not end the others' lookup; a failing lookup fails every request that waited for it.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime
from typing import Any

from llmplex.gateway.errors import GatewayError
from llmplex.gateway.keys.auth import KeyAuthenticator
from llmplex.gateway.keys.store import KeyRecord

KEY = "sk-llmplex-lookup-0123456789"


class SlowStore:
    """A key store whose lookups wait for ``release`` and are counted; ``revoked`` makes later ones revoked."""

    def __init__(self, error: Exception | None = None) -> None:
        self.calls = 0
        self.release = threading.Event()
        self.revoked = False
        self.error = error
        self.begun: asyncio.Semaphore | None = None  # released once per lookup begun, in the test's loop
        self.loop: asyncio.AbstractEventLoop | None = None

    def watch(self) -> None:
        """Count lookups begun from the running loop (``started``)."""
        self.loop, self.begun = asyncio.get_running_loop(), asyncio.Semaphore(0)

    def find(self, key: str) -> KeyRecord | None:
        self.calls += 1
        revoked = datetime.now(UTC).replace(tzinfo=None) if self.revoked else None  # as read when it began
        if self.loop is not None and self.begun is not None:
            self.loop.call_soon_threadsafe(self.begun.release)
        assert self.release.wait(30)
        if self.error is not None:
            raise self.error
        return KeyRecord(name="shared", created_at=datetime(2026, 1, 1), revoked_at=revoked)


def authenticator(store: SlowStore) -> KeyAuthenticator:
    fake: Any = store
    return KeyAuthenticator(None, fake, None, "sk-master-0123456789", cache_seconds=60)  # type: ignore[arg-type]


async def started(store: SlowStore) -> None:
    """Wait until one more lookup has begun."""
    assert store.begun is not None
    await asyncio.wait_for(store.begun.acquire(), 30)


def test_item_5_requests_on_an_expired_key_share_one_lookup() -> None:
    store = SlowStore()
    keys = authenticator(store)

    async def run() -> list[Any]:
        store.watch()
        waiting = [asyncio.ensure_future(keys.authenticate(KEY)) for _ in range(64)]
        await started(store)
        await asyncio.sleep(0.05)  # every request is waiting now
        store.release.set()
        return await asyncio.gather(*waiting)

    callers = asyncio.run(run())
    assert store.calls == 1
    assert {caller.name for caller in callers} == {"shared"}


def test_item_5_a_key_forgotten_during_a_lookup_is_read_again() -> None:
    store = SlowStore()
    keys = authenticator(store)

    async def run() -> tuple[str, BaseException | None]:
        store.watch()
        before = asyncio.ensure_future(keys.authenticate(KEY))
        await started(store)
        store.revoked = True  # revoked through /admin while the first lookup is in its thread
        keys.forget("shared")
        after = asyncio.ensure_future(keys.authenticate(KEY))
        await started(store)
        store.release.set()
        first = await before
        second = await asyncio.gather(after, return_exceptions=True)
        again = await asyncio.gather(keys.authenticate(KEY), return_exceptions=True)
        assert isinstance(again[0], GatewayError) and again[0].status == 401  # the lookup begun before: not cached
        return first.name, second[0] if isinstance(second[0], BaseException) else None

    name, refused = asyncio.run(run())
    assert name == "shared"  # the request that came before the revocation
    assert isinstance(refused, GatewayError) and refused.status == 401
    assert store.calls == 2


def test_item_5_a_request_that_leaves_does_not_end_the_shared_lookup() -> None:
    store = SlowStore()
    keys = authenticator(store)

    async def run() -> str:
        store.watch()
        leaving = asyncio.ensure_future(keys.authenticate(KEY))
        staying = asyncio.ensure_future(keys.authenticate(KEY))
        await started(store)
        leaving.cancel()
        await asyncio.gather(leaving, return_exceptions=True)
        store.release.set()
        return (await staying).name

    assert asyncio.run(run()) == "shared"
    assert store.calls == 1


def test_item_5_a_failed_lookup_fails_every_request_waiting_for_it() -> None:
    store = SlowStore(error=RuntimeError("the database broke"))
    keys = authenticator(store)

    async def run() -> list[Any]:
        store.watch()
        waiting = [asyncio.ensure_future(keys.authenticate(KEY)) for _ in range(8)]
        await started(store)
        await asyncio.sleep(0.02)
        store.release.set()
        return await asyncio.gather(*waiting, return_exceptions=True)

    failures = asyncio.run(run())
    assert all(isinstance(f, RuntimeError) for f in failures)
    assert store.calls == 1
    store.error, store.loop = None, None
    assert asyncio.run(keys.authenticate(KEY)).name == "shared"  # not cached: the next request reads again


def test_item_5_without_a_cache_each_request_after_a_lookup_reads_again() -> None:
    store = SlowStore()
    store.release.set()
    keys = authenticator(store)
    keys.cache_seconds = 0

    async def run() -> None:
        await keys.authenticate(KEY)
        await keys.authenticate(KEY)

    asyncio.run(run())
    assert store.calls == 2
