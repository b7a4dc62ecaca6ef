"""Deployment health in Redis (the ``[limits] storage``): every process and gateway replica sees one board.

Each deployment has four keys under ``llmplex:group:<group>:<model>``: ``cool``
(present while it sits out, expiring when it comes back), ``fails`` (retryable
failures in a row), ``busy`` (calls in flight) and ``lat`` (recent latency).
An ending call updates them in one Lua script, so two processes failing the
same deployment at once still cool it once, for everyone.

Every look at Redis is bounded (``llmplex.routing.reach``: ``SHARED_WAIT``;
``FIRST_WAIT`` for the first, which connects; less when the caller has less
time): a Redis that
stops answering, or cannot be reached, makes routing use this process's own
board (``MemoryBoard``, kept up to date all along) for ``LOCAL_SECONDS``
before it tries Redis again, so no call waits on it twice in
a row and none passes its deadline for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from llmplex.errors import LLMError
from llmplex.reliability.deadline import Deadline
from llmplex.reliability.guard import call_before
from llmplex.reliability.storage import LimitsStore
from llmplex.routing.health import LATENCY_WEIGHT, CoolRule, DeploymentState, MemoryBoard, Outcome
from llmplex.routing.reach import LOCAL_SECONDS, Reach

__all__ = ["RedisBoard"]

T = TypeVar("T")
logger = logging.getLogger("llmplex")

_ENDED = """
local busy = redis.call('DECR', KEYS[1])
if busy < 0 then redis.call('SET', KEYS[1], 0) end
redis.call('EXPIRE', KEYS[1], 600)
if ARGV[2] ~= '' then
  local new = tonumber(ARGV[2])
  local old = tonumber(redis.call('GET', KEYS[4]))
  if ARGV[1] == 'ok' or not old or new > old then
    if old then new = old + tonumber(ARGV[5]) * (new - old) end
    redis.call('SET', KEYS[4], tostring(new), 'EX', 3600)
  end
end
if ARGV[1] == 'ok' then
  redis.call('DEL', KEYS[2])
  return 0
end
if ARGV[1] ~= 'failed' then return 0 end
local fails = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], 60)
local ms = tonumber(ARGV[4])
if fails < tonumber(ARGV[3]) or ms <= 0 then return 0 end
redis.call('DEL', KEYS[2])
if redis.call('PTTL', KEYS[3]) < ms then redis.call('SET', KEYS[3], '1', 'PX', ms) end
return ms
"""


class _LateError(Exception):
    """Redis did not answer within the wait."""


class RedisBoard:
    """Deployment figures kept in Redis, mirrored in a local board that stands in when Redis does not answer."""

    does_io = True

    def __init__(self, store: LimitsStore, local: MemoryBoard, reach: Reach) -> None:
        self.store = store
        self.local = local
        self.reach = reach
        self._script: Any = None

    def read(self, keys: Sequence[str], wait: float | None) -> list[DeploymentState]:
        """Each deployment's state from Redis; the local figures when Redis does not answer within ``wait``."""
        shared = self._shared(lambda redis: _read(redis, keys), wait)
        return self.local.read(keys) if shared is None else shared

    def started(self, key: str) -> None:
        """One more call in flight, here and in Redis."""
        self.local.started(key)
        self._shared(
            lambda redis: redis.pipeline().incr(_key(key, "busy")).expire(_key(key, "busy"), 600).execute(), None
        )

    def ended(self, key: str, outcome: Outcome, latency: float | None, rule: CoolRule, asked: float | None) -> float:
        """The call's end, here and in Redis; the seconds the deployment now cools for (Redis decides)."""
        cooled = self.local.ended(key, outcome, latency, rule, asked)
        cooldown = 0.0 if rule.cooldown <= 0 else max(rule.cooldown, asked or 0.0)
        args = (outcome, "" if latency is None else repr(latency), rule.allowed_fails, int(cooldown * 1000))

        def end(redis: Any) -> float:
            keys = [_key(key, part) for part in ("busy", "fails", "cool", "lat")]
            return float(self._ended(redis)(keys=keys, args=[*args, LATENCY_WEIGHT])) / 1000

        shared = self._shared(end, None)
        if shared is None:
            return cooled
        if shared > 0:
            self.local.cool(key, shared)
        return shared

    def _ended(self, redis: Any) -> Any:
        if self._script is None:
            self._script = redis.register_script(_ENDED)
        return self._script

    def _shared(self, operation: Callable[[Any], T], wait: float | None) -> T | None:
        """``operation(redis)`` within ``wait`` seconds, or ``None`` (and local figures for a while)."""
        if self.reach.local:
            return None
        try:
            done = call_before(lambda: operation(self._redis()), Deadline.after(self.reach.wait(wait)), _LateError)
        except (_LateError, LLMError, OSError, _redis_errors()) as exc:
            self._go_local(exc)
            return None
        self.reach.connected = True
        return done

    def _redis(self) -> Any:
        storage = self.store.storage()
        client = getattr(storage, "storage", None)
        if client is None:  # the store fell back to memory itself (on_storage_error = "local")
            raise _LateError("the [limits] storage fell back to this process")
        return client

    def _go_local(self, cause: BaseException) -> None:
        if self.reach.failed():
            why = "no answer in time" if isinstance(cause, _LateError) else type(cause).__name__
            logger.warning(
                "model groups: the [limits] storage %s did not answer (%s); routing uses this process's own "
                "deployment health for %gs",
                self.store.shown,
                why,
                LOCAL_SECONDS,
            )


def _key(key: str, part: str) -> str:
    return f"llmplex:group:{key}:{part}"


def _read(redis: Any, keys: Sequence[str]) -> list[DeploymentState]:
    pipe = redis.pipeline(transaction=False)
    for key in keys:
        pipe.pttl(_key(key, "cool"))
        pipe.get(_key(key, "busy"))
        pipe.get(_key(key, "lat"))
    answers = pipe.execute()
    states = []
    for i in range(len(keys)):
        pttl, busy, latency = answers[3 * i : 3 * i + 3]
        states.append(
            DeploymentState(
                max(0, int(pttl)) / 1000, max(0, int(busy or 0)), None if latency is None else float(latency)
            )
        )
    return states


def _redis_errors() -> type[Exception]:
    from redis.exceptions import RedisError

    return RedisError
