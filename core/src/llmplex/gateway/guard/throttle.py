"""Failed authentications counted per client address in the ``[limits]`` storage (``AuthThrottle``).

Every replica and worker on one Redis counts into the same moving window, so an
address that failed ``[gateway] auth_failures`` times in ``auth_failure_window``
seconds is refused everywhere until the window lets it in again. IPv6 addresses are
counted by their /64 network (one host gets a whole /64). A storage that does not
answer within ``STORAGE_TIMEOUT`` (half a second: Redis answers in well under a
millisecond) lets the request through, and the next ``PAUSE`` seconds' requests too
without asking it (the keys' own limits still answer 503): the throttle never turns
an outage into a lock-out, nor into a wait on every request. With ``memory://`` (counted in
this process only) an address with no failure in the window is let through without a look at the storage.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import ipaddress
import logging
import time
from typing import TYPE_CHECKING, Any

from llmplex.errors import LLMError
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.storage import MEMORY, LimitsStore, moving_window, store_for

if TYPE_CHECKING:
    from llmplex.config.schema import Config

__all__ = ["PAUSE", "STARTUP_TIMEOUT", "STORAGE_TIMEOUT", "AuthThrottle", "client_address"]

log = logging.getLogger("llmplex.gateway")
STORAGE_TIMEOUT = 0.5
"""Seconds the throttle waits for the limits storage before it lets the request through."""
STARTUP_TIMEOUT = 2.0
"""Seconds the throttle waits for the storage at startup (its first connection)."""
PAUSE = 5.0
"""Seconds the throttle leaves the storage alone after it did not answer."""
_WARN_EVERY = 60.0
_PRUNE_AT = 10_000  # addresses remembered (memory://) before those whose failures all left the window are dropped


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

    @classmethod
    def of(cls, config: Config) -> AuthThrottle:
        """The throttle of ``config``'s ``[gateway]`` counts, on a ``[limits]`` store of its own: its own Redis
        clients, so a look it gives up on never disturbs the connections the keys' limits use."""
        gateway, shared = config.gateway, store_for(config.limits)
        throttle = cls(LimitsStore(shared.url, shared.on_error), gateway.auth_failures, gateway.auth_failure_window)
        throttle.prepare()
        return throttle

    def prepare(self) -> None:
        """Import the limiters and the Redis client and check the storage answers, now (when the application is
        built), so no request waits for that; a storage that does not answer is left for the requests to find."""
        import limits.aio.strategies
        import limits.strategies  # noqa: F401

        if self.store.does_io:
            with contextlib.suppress(LLMError):  # reported (once a minute) by the looks that follow
                self.store.storage()

    def __init__(self, store: LimitsStore, failures: int, window: int) -> None:
        from limits import RateLimitItemPerSecond

        self.store = store
        self.failures = failures
        self.window = window
        self._item = RateLimitItemPerSecond(failures, window)
        # memory:// counts in this process only: each gateway its own (several may share a process, as tests do)
        self._namespace = "shared" if store.url != MEMORY else f"app-{id(self):x}"
        self._warned_at = -_WARN_EVERY
        self._paused_until = 0.0
        self._failed_at: dict[str, float] = {}  # memory://: when each address last failed (the window's only source)

    def __repr__(self) -> str:
        return f"AuthThrottle({self.failures} per {self.window} s, {self.store!r})"

    async def warm_up(self) -> None:
        """Connect to the storage now (at startup), within ``STARTUP_TIMEOUT``, not on the first request's clock."""
        ids = ("llmplex", "auth_failures", self._namespace, "warm-up")
        await self._run("connect", lambda limiter: limiter.test(self._item, *ids), STARTUP_TIMEOUT)

    async def aclose(self) -> None:
        """Close the storage's Redis clients."""
        if self.store.does_io:
            await self.store.aclose()

    async def _run(self, what: str, operation: Any, timeout: float = STORAGE_TIMEOUT) -> Any:
        if not self.store.does_io:  # memory: no I/O to wait for, so no deadline either (this is every request's path)
            return operation(moving_window(self.store.storage()))
        if time.monotonic() < self._paused_until:
            return None

        async def run(storage: Any) -> Any:
            result = operation(moving_window(storage))
            return await result if inspect.isawaitable(result) else result

        try:
            return await self.store.arun(run, Deadline.after(timeout))
        except LLMError as exc:
            now = time.monotonic()
            self._paused_until = now + PAUSE
            if now - self._warned_at >= _WARN_EVERY:  # one line a minute, not one per request, while it lasts
                self._warned_at = now
                log.warning("the failed-authentication throttle could not %s: %s", what, exc.message)
            return None

    async def retry_after(self, address: str) -> float | None:
        """Seconds until ``address`` may try again, or ``None`` when it is not held back."""
        if not self.store.does_io:  # counted here only: an address with no failure in the window is not held back
            last = self._failed_at.get(address)
            if last is None or time.monotonic() - last > self.window:
                return None
        ids = ("llmplex", "auth_failures", self._namespace, address)
        allowed = await self._run("read its window", lambda limiter: limiter.test(self._item, *ids))
        if allowed is None or allowed:
            return None
        stats = await self._run("read its window", lambda limiter: limiter.get_window_stats(self._item, *ids))
        reset = stats.reset_time - time.time() if stats is not None else self.window
        return float(max(1.0, min(float(self.window), reset)))

    async def failed(self, address: str) -> None:
        """Count one failed authentication of ``address``."""
        if not self.store.does_io:
            now = time.monotonic()
            if len(self._failed_at) >= _PRUNE_AT:
                self._failed_at = {known: at for known, at in self._failed_at.items() if now - at <= self.window}
            self._failed_at[address] = now
        ids = ("llmplex", "auth_failures", self._namespace, address)
        await self._run("count a failure", lambda limiter: limiter.hit(self._item, *ids))
