"""Failed authentications counted per client address in the ``[limits]`` storage (``AuthThrottle``).

Every replica and worker on one Redis counts into the same moving window, so an
address that failed ``[gateway] auth_failures`` times in ``auth_failure_window``
seconds is refused everywhere until the window lets it in again. IPv6 addresses are
counted by their /64 network (one host gets a whole /64). A storage that does not
answer within ``STORAGE_TIMEOUT`` lets the request through (the keys' own limits
still refuse it with a 503): the throttle never turns an outage into a lock-out.
"""

from __future__ import annotations

import functools
import inspect
import ipaddress
import logging
import time
import weakref
from typing import Any

from llmplex.errors import LLMError
from llmplex.gateway.key_limits import STORAGE_TIMEOUT
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.storage import MEMORY, LimitsStore

__all__ = ["AuthThrottle", "client_address"]

log = logging.getLogger("llmplex.gateway")
_WARN_EVERY = 60.0


def client_address(scope: Any) -> str:
    """The address a request is counted under: the client's IPv4 address, its IPv6 /64, or ``unknown``."""
    client = scope.get("client")
    host = client[0] if client else None
    return _counted_as(host) if host else "unknown"


@functools.lru_cache(maxsize=4096)
def _counted_as(host: str) -> str:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return str(host)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address.ipv4_mapped or address) if isinstance(address, ipaddress.IPv6Address) else str(address)


class AuthThrottle:
    """At most ``failures`` failed authentications per address in ``window`` seconds, counted in ``store``."""

    def __init__(self, store: LimitsStore, failures: int, window: int) -> None:
        from limits import RateLimitItemPerSecond

        self.store = store
        self.failures = failures
        self.window = window
        self._item = RateLimitItemPerSecond(failures, window)
        # memory:// counts in this process only: each gateway its own (several may share a process, as tests do)
        self._namespace = "shared" if store.url != MEMORY else f"app-{id(self):x}"
        self._limiters: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        self._warned_at = -_WARN_EVERY

    def __repr__(self) -> str:
        return f"AuthThrottle({self.failures} per {self.window} s, {self.store!r})"

    def _limiter(self, storage: Any) -> Any:
        limiter = self._limiters.get(storage)
        if limiter is None:
            from limits.aio.storage import Storage as AsyncStorage
            from limits.aio.strategies import MovingWindowRateLimiter as AsyncLimiter
            from limits.strategies import MovingWindowRateLimiter

            kind = AsyncLimiter if isinstance(storage, AsyncStorage) else MovingWindowRateLimiter
            limiter = self._limiters[storage] = kind(storage)
        return limiter

    async def _run(self, what: str, operation: Any) -> Any:
        if not self.store.does_io:  # memory: no I/O to wait for, so no deadline either (this is every request's path)
            return operation(self._limiter(self.store.storage()))

        async def run(storage: Any) -> Any:
            result = operation(self._limiter(storage))
            return await result if inspect.isawaitable(result) else result

        try:
            return await self.store.arun(run, Deadline.after(STORAGE_TIMEOUT))
        except LLMError as exc:
            now = time.monotonic()
            if now - self._warned_at >= _WARN_EVERY:  # one line a minute, not one per request, while it lasts
                self._warned_at = now
                log.warning("the failed-authentication throttle could not %s: %s", what, exc.message)
            return None

    async def retry_after(self, address: str) -> float | None:
        """Seconds until ``address`` may try again, or ``None`` when it is not held back."""
        ids = ("llmplex", "auth_failures", self._namespace, address)
        allowed = await self._run("read its window", lambda limiter: limiter.test(self._item, *ids))
        if allowed is None or allowed:
            return None
        stats = await self._run("read its window", lambda limiter: limiter.get_window_stats(self._item, *ids))
        reset = stats.reset_time - time.time() if stats is not None else self.window
        return float(max(1.0, min(float(self.window), reset)))

    async def failed(self, address: str) -> None:
        """Count one failed authentication of ``address``."""
        ids = ("llmplex", "auth_failures", self._namespace, address)
        await self._run("count a failure", lambda limiter: limiter.hit(self._item, *ids))
