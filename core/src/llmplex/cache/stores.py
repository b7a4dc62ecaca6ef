"""Where cached answers live: this process's memory, or diskcache files shared by processes."""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any, Protocol

from llmplex.errors import LLMConfigurationError

__all__ = ["CACHE_DIR_ENV", "DiskStore", "MemoryStore", "Store", "cache_dir"]

CACHE_DIR_ENV = "LLMPLEX_CACHE_DIR"
"""Environment variable that overrides the llmplex cache directory."""


def cache_dir() -> Path:
    """The llmplex cache directory: ``$LLMPLEX_CACHE_DIR`` or the user cache dir (platformdirs)."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("llmplex"))


class Store(Protocol):
    """A string store; errors raised here become a warning and a miss in ``ResponseCache``."""

    def get(self, key: str) -> str | None:
        """The value under ``key``, or ``None``."""

    def set(self, key: str, value: str, ttl: float | None) -> None:
        """Keep ``value`` under ``key`` (for about ``ttl`` seconds where given)."""

    def delete(self, key: str) -> None:
        """Forget ``key``."""


class MemoryStore:
    """Entries in a dict of this process (``backend = "memory"``); expiry is the cache's."""

    def __init__(self) -> None:
        self._entries: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        """The value under ``key``, or ``None``."""
        with self._lock:
            return self._entries.get(key)

    def set(self, key: str, value: str, ttl: float | None) -> None:
        """Keep ``value`` under ``key``."""
        with self._lock:
            self._entries[key] = value

    def delete(self, key: str) -> None:
        """Forget ``key``."""
        with self._lock:
            self._entries.pop(key, None)


class DiskStore:
    """A diskcache directory (``backend = "disk"``), safe to share between processes; opened on first use.

    Values are text only: the directory's ``Disk`` refuses to unpickle, so an entry another program
    pickled into the directory is read as an error (a warning and a miss), never run.
    """

    def __init__(self, directory: Path | None = None) -> None:
        if importlib.util.find_spec("diskcache") is None:
            raise LLMConfigurationError(
                '[cache] backend = "disk" needs diskcache: pip install "llmplex[cache]", or set backend = "memory"'
            )
        self.directory = directory if directory is not None else cache_dir() / "responses"
        self._cache: Any = None
        self._lock = threading.Lock()

    def _open(self) -> Any:
        if self._cache is None:
            with self._lock:
                if self._cache is None:
                    import diskcache

                    self._cache = diskcache.Cache(str(self.directory), disk=_text_disk())
        return self._cache

    def get(self, key: str) -> str | None:
        """The value under ``key``, or ``None``."""
        value = self._open().get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"the entry holds {type(value).__name__}, not the JSON text llmplex writes")
        return value

    def set(self, key: str, value: str, ttl: float | None) -> None:
        """Keep ``value`` under ``key``; diskcache evicts it after ``ttl`` seconds of wall time."""
        self._open().set(key, value, expire=ttl)

    def delete(self, key: str) -> None:
        """Forget ``key``."""
        self._open().delete(key)


@functools.cache
def _text_disk() -> type[Any]:
    """A diskcache ``Disk`` that stores and reads text only: it never unpickles (diskcache's default does)."""
    import diskcache

    class TextDisk(diskcache.Disk):  # type: ignore[misc]
        """Keys and values as diskcache stores str itself; pickled or binary values are refused."""

        def store(self, value: Any, read: bool, key: Any = diskcache.core.UNKNOWN) -> Any:
            if not isinstance(value, str):
                raise TypeError(f"the llmplex response cache stores text only, not {type(value).__name__}")
            return super().store(value, read, key=key)

        def get(self, key: Any, raw: bool) -> Any:
            if not raw:
                raise ValueError("the entry's key is pickled, which llmplex never writes nor loads")
            return super().get(key, raw)

        def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
            if mode not in (diskcache.core.MODE_RAW, diskcache.core.MODE_TEXT):
                kind = "pickled" if mode == diskcache.core.MODE_PICKLE else "binary"
                raise ValueError(f"the entry holds a {kind} value, which llmplex never writes nor loads")
            return super().fetch(mode, filename, value, read)

    return TextDisk
