"""Readiness probes: the parts a gateway needs before it takes traffic (the ``[limits]`` Redis, the database).

A probe with ``degrades = True`` names a part the gateway serves without (the
database, while spend rows wait in the local journal): readiness then answers
200 with ``"status": "degraded"`` instead of 503.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from llmplex.config.schema import Config
from llmplex.masking.secret_url import reveal
from llmplex.masking.values import redact

if TYPE_CHECKING:
    from llmplex.gateway.spend.journal import SpendJournal

__all__ = ["database_check", "journal_checks", "readiness_checks", "redis_check"]

_PROBE_SECONDS = 2.0


def redis_check(url: str) -> Callable[[], Awaitable[str | None]]:
    """A probe that pings the Redis at ``url``: ``None`` when it answers within two seconds."""

    async def redis() -> str | None:
        try:
            import redis.asyncio as aioredis
        except ImportError:
            return "the redis package is not installed: pip install 'llmplex[redis]'"
        connection = aioredis.Redis.from_url(url, socket_connect_timeout=_PROBE_SECONDS, socket_timeout=_PROBE_SECONDS)
        try:
            await asyncio.wait_for(connection.ping(), _PROBE_SECONDS)
        except Exception as exc:
            return redact(f"redis at {url} does not answer: {type(exc).__name__}")
        finally:
            await connection.aclose()
        return None

    return redis


def database_check(url: str) -> Callable[[], Awaitable[str | None]]:
    """A probe that runs ``SELECT 1`` on the database at ``url`` (through ``llmplex.store``): ``None`` when it
    answers within two seconds."""
    engines: list[Any] = []

    async def database() -> str | None:
        from sqlalchemy import text

        from llmplex.store.database import async_engine

        try:
            if not engines:
                engines.append(async_engine(url))
            async with asyncio.timeout(_PROBE_SECONDS), engines[0].connect() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception as exc:
            return redact(f"the database at {url} does not answer: {type(exc).__name__}")
        return None

    return database


def journal_checks(journal: SpendJournal) -> list[Callable[[], Awaitable[str | None]]]:
    """Probes of the spend journal: ``journal`` fails while no row can be written (requests are refused);
    ``spend_log`` degrades while rows wait in the journal for the database."""

    async def journal_problem() -> str | None:
        return journal.problems().get("journal")

    async def spend_log() -> str | None:
        return journal.problems().get("database")

    journal_problem.__name__ = "journal"
    spend_log.degrades = True  # type: ignore[attr-defined]
    return [journal_problem, spend_log]


def readiness_checks(config: Config, *, degrades: bool = False) -> list[Callable[[], Awaitable[str | None]]]:
    """The probes ``config`` calls for: the shared-limits Redis when ``[limits] storage`` names one, and the
    database when ``[gateway] database`` or ``[log] database`` names one (the default SQLite file is made when
    the gateway starts). ``degrades``: the gateway serves without its database (its rows are journaled)."""
    checks = []
    storage = config.limits.storage.get_secret_value()
    if storage.startswith(("redis://", "rediss://")):
        checks.append(redis_check(storage))
    database = reveal(config.gateway.database or config.log.database)
    if database:
        probe = database_check(database)
        probe.degrades = degrades  # type: ignore[attr-defined]
        checks.append(probe)
    return checks
