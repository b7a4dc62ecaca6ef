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
from then on.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import warnings
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from llmplex.config.schema import LimitsConfig
from llmplex.errors import LLMConfigurationError, LLMConnectionError
from llmplex.redaction import redact

if TYPE_CHECKING:
    from limits.aio.storage import Storage as AsyncStorage
    from limits.errors import StorageError
    from limits.storage import Storage

__all__ = ["CONNECT_TIMEOUT", "MEMORY", "LimitsStorageWarning", "LimitsStore", "store_for"]

T = TypeVar("T")

MEMORY = "memory://"
CONNECT_TIMEOUT = 2.0
"""Seconds a Redis connect or command may take before the storage counts as unreachable."""


class LimitsStorageWarning(UserWarning):
    """The ``[limits]`` storage is unreachable and ``on_storage_error = "local"``: limits are per process now."""


class LimitsStore:
    """The ``limits`` storage of one URL, for sync and async code, with the config's failure policy."""

    def __init__(self, url: str, on_error: str = "raise") -> None:
        self.url = url
        self.on_error = on_error
        self.shown = redact(url)
        self._sync: Storage | None = None
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncStorage] = weakref.WeakKeyDictionary()
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

    def astorage(self) -> Storage | AsyncStorage:
        """The storage async code uses: the memory storage itself, or this event loop's Redis client."""
        if self.url == MEMORY or self.storage() is _memory():  # connects and checks Redis once, as sync code does
            return _memory()
        loop = asyncio.get_running_loop()
        found = self._async.get(loop)
        if found is None:
            from limits.storage import storage_from_string

            opened = storage_from_string(
                "async+" + self.url, implementation="redispy", wrap_exceptions=True, **_redis_options(True)
            )
            found = self._async[loop] = cast("AsyncStorage", opened)
        return found

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
        if not storage.check():
            return self._unreachable(None)
        return storage

    # -- calls -----------------------------------------------------------------------

    def run(self, operation: Callable[[Storage], T]) -> T:
        """``operation(storage)``; a storage failure becomes the configured error or local fallback."""
        storage = self.storage()
        try:
            return operation(storage)
        except _storage_error() as exc:
            return operation(self._unreachable(exc.storage_error))

    async def arun(self, operation: Callable[[Any], Awaitable[T]]) -> T:
        """Async ``run``: ``operation`` gets ``astorage`` (an async storage, or the memory one)."""
        storage = self.astorage()
        try:
            return await operation(storage)
        except _storage_error() as exc:
            return await operation(self._unreachable(exc.storage_error))

    def _unreachable(self, cause: BaseException | None) -> Storage:
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


def store_for(config: LimitsConfig) -> LimitsStore:
    """The process-wide store of a ``[limits]`` table (one per URL and failure policy)."""
    key = (config.storage, config.on_storage_error)
    found = _stores.get(key)
    if found is None:
        with _stores_lock:
            found = _stores.setdefault(key, LimitsStore(*key))
    return found
