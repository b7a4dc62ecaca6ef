"""Where the call log lives and how to open it: URLs, sync and async engines, migrations.

SQLite (the default, ``logs.db`` in the user data directory) runs in WAL mode
with a busy timeout, so that many processes write at once; writers take the
write lock when their transaction begins (``BEGIN IMMEDIATE``), never halfway
through it. PostgreSQL goes through psycopg 3 (``llmplex[postgres]``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmplex.errors import LLMConfigurationError

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine
    from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = [
    "BUSY_TIMEOUT",
    "HEAD",
    "async_engine",
    "data_dir",
    "default_url",
    "migrate",
    "open_database",
    "sqlite_path",
    "switch_path",
    "switched_off",
    "sync_engine",
]

BUSY_TIMEOUT = 60.0
"""Seconds a SQLite connection waits for another process's write lock before giving up."""

_MIGRATIONS = Path(__file__).with_name("migrations")

HEAD = "0003"
"""The newest migration's revision (a test checks it is Alembic's head)."""


def data_dir() -> Path:
    """llmplex's user data directory (platformdirs; ``$XDG_DATA_HOME/llmplex`` on Linux)."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("llmplex"))


def switch_path() -> Path:
    """The file whose presence turns the CLI's call log off (``llmplex logs off``; ``on`` removes it)."""
    return data_dir() / "logs-off"


def switched_off() -> bool:
    """Whether ``llmplex logs off`` turned the CLI's call log off."""
    return switch_path().exists()


def default_url() -> str:
    """``sqlite:///`` the ``logs.db`` file in the user data directory."""
    return f"sqlite:///{data_dir() / 'logs.db'}"


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:///PATH`` URL (``None`` for another database or an in-memory one)."""
    scheme, sep, rest = url.partition(":///")
    if not sep or scheme.partition("+")[0] != "sqlite" or not rest or rest.startswith(":memory:"):
        return None
    return Path(rest.partition("?")[0]).expanduser()


def _driver_url(url: str, asynchronous: bool) -> str:
    """``url`` with the driver llmplex uses: pysqlite/aiosqlite for SQLite, psycopg 3 for PostgreSQL."""
    scheme, sep, rest = url.partition("://")
    base = scheme.partition("+")[0]
    if not sep or base not in ("sqlite", "postgresql", "postgres"):
        raise LLMConfigurationError(
            f"[log] database must be a sqlite:///PATH or postgresql://... URL, got one starting {scheme!r}; "
            "set it in [log] database or LLMPLEX_LOG__DATABASE"
        )
    sqlite = "sqlite+aiosqlite" if asynchronous else "sqlite+pysqlite"
    return f"{sqlite if base == 'sqlite' else 'postgresql+psycopg'}://{rest}"


def _sqlite_setup(dbapi_connection: Any, immediate: bool) -> None:
    """WAL, a busy timeout and NORMAL sync on every new SQLite connection."""
    if immediate:
        dbapi_connection.isolation_level = None  # the driver leaves BEGIN to the engine's "begin" event
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
    finally:
        cursor.close()


def sync_engine(url: str | None = None, *, writer: bool = False, keep_open: bool = False) -> Engine:
    """A SQLAlchemy engine on ``url`` (default: ``default_url()``).

    ``writer=True`` on SQLite begins every transaction with ``BEGIN IMMEDIATE``: a
    transaction that reads then writes never fails with "database is locked" when
    another process wrote in between; it waits for the lock (``BUSY_TIMEOUT``).
    SQLite connections are closed after each use unless ``keep_open`` (one long-lived
    writer: opening a connection, setting it up and closing it, which checkpoints the
    WAL, costs more than the batch it writes).
    """
    from sqlalchemy import create_engine, event
    from sqlalchemy.pool import NullPool, QueuePool

    url = url or default_url()
    driver = _driver_url(url, asynchronous=False)
    if not driver.startswith("sqlite"):
        return create_engine(driver, pool_pre_ping=True)
    if keep_open:  # one connection, used by whichever thread writes next
        arguments = {"timeout": BUSY_TIMEOUT, "check_same_thread": False}
        engine = create_engine(driver, poolclass=QueuePool, pool_size=1, max_overflow=0, connect_args=arguments)
    else:
        engine = create_engine(driver, poolclass=NullPool, connect_args={"timeout": BUSY_TIMEOUT})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, record: Any) -> None:
        _sqlite_setup(dbapi_connection, writer)

    if writer:

        @event.listens_for(engine, "begin")
        def _begin(connection: Connection) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def async_engine(url: str | None = None) -> AsyncEngine:
    """An async engine on ``url``: ``sqlite+aiosqlite`` (WAL, busy timeout) or ``postgresql+psycopg``."""
    from sqlalchemy import event
    from sqlalchemy.ext.asyncio import create_async_engine
    from sqlalchemy.pool import NullPool

    url = url or default_url()
    driver = _driver_url(url, asynchronous=True)
    if not driver.startswith("sqlite"):
        return create_async_engine(driver, pool_pre_ping=True)
    engine = create_async_engine(driver, poolclass=NullPool, connect_args={"timeout": BUSY_TIMEOUT})

    @event.listens_for(engine.sync_engine, "connect")
    def _connect(dbapi_connection: Any, record: Any) -> None:
        _sqlite_setup(dbapi_connection, immediate=False)

    return engine


def _alembic_config(connection: Connection) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    config.attributes["connection"] = connection
    return config


@contextlib.contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    """One migrating process at a time: a file lock beside a SQLite file, an advisory lock on PostgreSQL."""
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            connection.exec_driver_sql("SELECT pg_advisory_lock(250425)")
            try:
                yield
            finally:
                connection.exec_driver_sql("SELECT pg_advisory_unlock(250425)")
        return
    path = sqlite_path(str(engine.url))
    if path is None:
        yield
        return
    import fcntl

    with open(f"{path}.migrate-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _version(connection: Connection) -> str | None:
    """The schema's revision, read without Alembic (``None``: no schema yet)."""
    from sqlalchemy import exc, text

    try:
        return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except exc.DBAPIError:
        return None


def migrate(engine: Engine) -> None:
    """Bring the database to the newest schema (idempotent; safe with many processes starting at once).

    A database already at ``HEAD`` is checked with one query: Alembic is imported only to migrate.
    """
    with engine.connect() as connection:
        if _version(connection) == HEAD:
            return
    with _migration_lock(engine):
        with engine.connect() as connection:
            if _version(connection) == HEAD:  # another process migrated while this one waited
                return
        from alembic import command

        with engine.begin() as connection:
            command.upgrade(_alembic_config(connection), "head")


def open_database(
    url: str | None = None, *, writer: bool = False, create: bool = True, keep_open: bool = False
) -> Engine:
    """An engine on ``url`` with the newest schema (see ``sync_engine``).

    SQLite's directory is made when missing. ``create=False`` refuses a SQLite
    file that does not exist yet (readers: nothing was logged) with
    ``FileNotFoundError`` instead of making one.
    """
    url = url or default_url()
    path = sqlite_path(url)
    if path is not None:
        if not path.exists() and not create:
            raise FileNotFoundError(str(path))
        if path.exists() and not path.is_file():  # a directory, a FIFO (opening it would block), a device
            raise LLMConfigurationError(
                f"the call log's database {path} is not a regular file; set [log] database to a file path"
            )
        if create:
            os.makedirs(path.parent, exist_ok=True)
    engine = sync_engine(url, writer=writer, keep_open=keep_open)
    try:
        migrate(engine)
    except BaseException:
        engine.dispose()
        raise
    return engine
