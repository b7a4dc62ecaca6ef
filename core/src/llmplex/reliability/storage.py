"""Where shared limits live: the ``limits`` library's storage for one URL, opened once per process.

``memory://`` is one in-process storage, used by sync and async code alike (it
does no I/O). ``redis://`` opens a redis-py client for sync code and one
``redis.asyncio`` client per event loop for async code; both read and write the
same keys, so threads, tasks, processes and hosts on one Redis share every
window and counter. ``limits`` (and the Redis client) are imported on first use.

A storage that cannot be reached fails the call with
``LLMConnectionError`` naming the URL (credentials
masked); with ``on_storage_error = "local"`` it warns once
(``LimitsStorageWarning``) and this process keeps its limits in memory
from then on. A wrong password is ``LLMAuthenticationError`` saying so, whatever
the policy. The URL's password is registered as a secret: no repr, error or log shows it.

Given the call's deadline, ``run``/``arun`` end by it whatever Redis does (a
frozen server included): sync code waits on a worker thread it abandons at the
deadline, async code is cancelled there. Async code never blocks its loop: the
first connection (and its check) is made on a worker thread, and each loop's
client is closed when ``asyncio.run`` shuts the loop down, or by ``aclose()``.
"""

from __future__ import annotations

import functools
import logging
import threading
import warnings
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import urlsplit

from llmplex.config.schema import LimitsConfig
from llmplex.errors import LLMAuthenticationError, LLMConfigurationError, LLMConnectionError, LLMDeadlineExceededError
from llmplex.masking.values import redact, register_url_secrets
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.guard import await_before, call_before, in_worker
from llmplex.reliability.per_loop import PerLoop

if TYPE_CHECKING:
    from limits.aio.storage import Storage as AsyncStorage
    from limits.errors import StorageError
    from limits.storage import Storage

__all__ = [
    "CONNECT_TIMEOUT",
    "MEMORY",
    "LimitsStorageWarning",
    "LimitsStore",
    "moving_window",
    "opened_store",
    "store_for",
]

T = TypeVar("T")

logger = logging.getLogger("llmplex")

MEMORY = "memory://"
CONNECT_TIMEOUT = 2.0
"""Seconds a Redis connect or command may take before the storage counts as unreachable."""


class LimitsStorageWarning(UserWarning):
    """The ``[limits]`` storage is unreachable and ``on_storage_error = "local"``: limits are per process now."""


class LimitsStore:
    """The ``limits`` storage of one URL, for sync and async code, with the config's failure policy."""

    def __init__(self, url: str, on_error: str = "raise") -> None:
        register_url_secrets(url)
        self.url = url
        self.on_error = on_error
        self.shown = redact(url)
        self._sync: Storage | None = None
        self._async: PerLoop[AsyncStorage] = PerLoop(self._open_async, _aclose_storage)
        self._local = False
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"LimitsStore({self.shown!r})"

    @property
    def shared(self) -> bool:
        """Whether other processes see these limits (a reachable Redis), as far as is known."""
        return self.url != MEMORY and not self._local

    # -- the storages ----------------------------------------------------------------

    def storage(self) -> Storage:
        """The sync storage (connected and checked on first use)."""
        if self._local:
            return _memory()
        if self._sync is None:
            with self._lock:
                if self._sync is None:
                    self._sync = _memory() if self.url == MEMORY else self._open_redis()
        return self._sync

    @property
    def does_io(self) -> bool:
        """Whether a call to the storage may wait on the network (Redis, not memory or the local fallback)."""
        return self.url != MEMORY and not self._local

    async def astorage(self) -> Storage | AsyncStorage:
        """The storage async code uses: the memory storage itself, or this event loop's Redis client.

        The first use connects and checks Redis on a worker thread (as sync code does), not on the loop."""
        if self.url == MEMORY or self._local:
            return _memory()
        if self._sync is None:
            await in_worker(self.storage)
        if self.storage() is _memory():  # connected by now: no I/O; the local fallback if Redis was not there
            return _memory()
        return self._async.get()

    def _open_async(self) -> AsyncStorage:
        from limits.storage import storage_from_string

        opened = storage_from_string(
            "async+" + self.url, implementation="redispy", wrap_exceptions=True, **_redis_options(True)
        )
        return cast("AsyncStorage", opened)

    def close(self) -> None:
        """Close the event loops' Redis clients (each on its loop; see ``PerLoop.close``); the next use opens
        new ones."""
        self._async.close()

    async def aclose(self) -> None:
        """Close the event loops' Redis clients, awaiting this loop's."""
        await self._async.aclose()

    def _open_redis(self) -> Storage:
        from limits.errors import ConfigurationError
        from limits.storage import storage_from_string

        try:
            options = _redis_options()
            storage = cast("Storage", storage_from_string(self.url, wrap_exceptions=True, **options))
        except (ConfigurationError, ImportError) as exc:
            raise LLMConfigurationError(
                f"[limits] storage {self.shown} needs the Redis client: pip install 'llmplex[redis]' ({exc})"
            ) from None
        except ValueError as exc:
            raise LLMConfigurationError(f"[limits] storage {self.shown} is not a valid Redis URL: {exc}") from None
        try:
            problem = self._ping(storage)
        except BaseException:
            storage.storage.close()  # type: ignore[attr-defined]
            raise
        if problem is not None:
            storage.storage.close()  # type: ignore[attr-defined]
            return self._unreachable(problem)
        return storage

    def _ping(self, storage: Storage) -> BaseException | None:
        """What keeps ``storage`` from answering PING (``None``: nothing); a refused password is raised."""
        from redis.exceptions import AuthenticationError, RedisError, ResponseError

        try:
            storage.storage.ping()  # type: ignore[attr-defined]
        except (AuthenticationError, ResponseError) as exc:
            if isinstance(exc, AuthenticationError) or "AUTH" in str(exc).upper():
                raise self._refused(exc) from None
            return exc
        except RedisError as exc:
            return exc
        return None

    def _refused(self, error: BaseException) -> LLMAuthenticationError:
        given = urlsplit(self.url).password is not None
        what = (
            "wrong password: Redis refused the password (or user name) in the URL"
            if given
            else "Redis needs a password and the URL gives none (redis://:PASSWORD@host:port/db)"
        )
        return LLMAuthenticationError(
            f"the [limits] storage {self.shown}: {what} ({redact(str(error))}); fix the password in [limits] storage",
            attempts=0,
            context={"storage": self.shown},
        )

    # -- calls -----------------------------------------------------------------------

    def run(self, operation: Callable[[Storage], T], deadline: Deadline | None = None) -> T:
        """``operation(storage)``; a storage failure becomes the configured error or local fallback.

        With a ``deadline``, a storage that does I/O is waited for on a worker thread until then at most
        (``LLMDeadlineExceededError``; the abandoned operation ends on its own)."""
        if deadline is None or not self.does_io:
            return self._run(operation)
        return call_before(lambda: self._run(operation), deadline, self._expired)

    def _run(self, operation: Callable[[Storage], T]) -> T:
        storage = self.storage()
        try:
            return operation(storage)
        except _storage_error() as exc:
            return operation(self._unreachable(exc.storage_error))

    async def arun(self, operation: Callable[[Any], Awaitable[T]], deadline: Deadline | None = None) -> T:
        """Async ``run``: ``operation`` gets ``astorage`` (an async storage, or the memory one); cancelled at
        ``deadline``."""
        return await await_before(lambda: self._arun(operation), deadline, self._expired)

    async def _arun(self, operation: Callable[[Any], Awaitable[T]]) -> T:
        storage = await self.astorage()
        try:
            return await operation(storage)
        except _storage_error() as exc:
            return await operation(self._unreachable(exc.storage_error))

    def _expired(self) -> LLMDeadlineExceededError:
        return LLMDeadlineExceededError(
            f"deadline reached while waiting for the [limits] storage {self.shown} (Redis did not answer in time); "
            "nothing was sent",
            attempts=0,
            context={"storage": self.shown},
        )

    def _unreachable(self, cause: BaseException | None) -> Storage:
        from redis.exceptions import AuthenticationError

        if isinstance(cause, AuthenticationError):  # the password changed while in use
            raise self._refused(cause)
        why = f": {redact(str(cause))}" if cause is not None else " (no answer to PING)"
        if self.on_error != "local":
            raise LLMConnectionError(
                f"the [limits] storage {self.shown} cannot be reached{why}; start Redis there, fix [limits] storage, "
                'or set [limits] on_storage_error = "local" to fall back to per-process limits',
                attempts=0,
                context={"storage": self.shown},
            )
        with self._lock:
            first = not self._local
            self._local = True
        if first:
            warnings.warn(
                f"the [limits] storage {self.shown} cannot be reached{why}; rate limits and budgets are now "
                "kept per process (on_storage_error = local)",
                LimitsStorageWarning,
                stacklevel=4,
            )
        return _memory()


async def _aclose_storage(storage: AsyncStorage) -> None:
    """Close an async Redis storage's client and its connections (a failure is logged)."""
    try:
        await storage.bridge.get_connection().aclose()  # type: ignore[attr-defined]
    except Exception as exc:
        logger.warning("closing a [limits] Redis client failed: %s: %s", type(exc).__name__, exc)


@functools.cache
def _storage_error() -> type[StorageError]:
    from limits.errors import StorageError

    return StorageError


def _redis_options(asynchronous: bool = False) -> dict[str, Any]:
    """Timeouts, and one immediate retry (a pooled connection the server closed) instead of redis-py's
    backed-off three."""
    from redis.backoff import NoBackoff

    if asynchronous:
        from redis.asyncio.retry import Retry as AsyncRetry

        retry: Any = AsyncRetry(NoBackoff(), 1)
    else:
        from redis.retry import Retry

        retry = Retry(NoBackoff(), 1)
    return {"socket_connect_timeout": CONNECT_TIMEOUT, "socket_timeout": CONNECT_TIMEOUT, "retry": retry}


_limiters: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def moving_window(storage: Any) -> Any:
    """The ``limits`` moving-window limiter over ``storage`` (a sync or an async one), built once per storage."""
    limiter = _limiters.get(storage)
    if limiter is None:
        from limits.aio.storage import Storage as AsyncStorage
        from limits.aio.strategies import MovingWindowRateLimiter as AsyncLimiter
        from limits.strategies import MovingWindowRateLimiter

        kind = AsyncLimiter if isinstance(storage, AsyncStorage) else MovingWindowRateLimiter
        limiter = _limiters[storage] = kind(storage)
    return limiter


_stores: dict[tuple[str, str], LimitsStore] = {}
_memory_storage: list[Storage] = []
_stores_lock = threading.Lock()


def _memory() -> Storage:
    """This process's one memory storage (``memory://`` and the local fallback)."""
    if not _memory_storage:
        from limits.storage import MemoryStorage

        with _stores_lock:
            if not _memory_storage:
                _memory_storage.append(MemoryStorage())
    return _memory_storage[0]


def opened_store(config: LimitsConfig) -> LimitsStore | None:
    """The store of a ``[limits]`` table if this process opened it already, else ``None``."""
    return _stores.get((config.storage.get_secret_value(), config.on_storage_error))


def store_for(config: LimitsConfig) -> LimitsStore:
    """The process-wide store of a ``[limits]`` table (one per URL and failure policy)."""
    key = (config.storage.get_secret_value(), config.on_storage_error)
    found = _stores.get(key)
    if found is None:
        with _stores_lock:
            found = _stores.setdefault(key, LimitsStore(*key))
    return found
