"""Readiness probes: the parts a gateway needs before it takes traffic (the ``[limits]`` Redis, when set)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from llmplex.config.schema import Config
from llmplex.redaction import redact

__all__ = ["readiness_checks", "redis_check"]

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


def readiness_checks(config: Config) -> list[Callable[[], Awaitable[str | None]]]:
    """The probes ``config`` calls for: the shared-limits Redis when ``[limits] storage`` names one."""
    storage = config.limits.storage
    if storage.startswith(("redis://", "rediss://")):
        return [redis_check(storage)]
    return []
