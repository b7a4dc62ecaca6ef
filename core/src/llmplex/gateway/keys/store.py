"""The gateway's virtual keys: made, listed, changed and revoked in the ``virtual_keys`` table.

A key is shown once, when it is made; the database keeps only its sha256. The
gateway, ``llmplex keys`` and ``/admin/keys`` all go through ``KeyStore`` on the
database ``database_url`` names (``[gateway] database``, else ``[log] database``,
else ``logs.db`` in the user data directory). SQLAlchemy is imported when a
``KeyStore`` is used, not when this module is.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from fnmatch import fnmatchcase
from typing import Any

from llmplex.config.schema import Config
from llmplex.errors import LLMConfigurationError
from llmplex.gateway.errors import GatewayError
from llmplex.masking.secret_url import reveal

__all__ = [
    "KEY_PREFIX",
    "KeyRecord",
    "KeyStore",
    "database_down",
    "database_url",
    "hash_key",
    "parse_duration",
    "parse_money",
]

KEY_PREFIX = "sk-llmplex-"
"""How every virtual key starts (so that scanners and ``redact`` recognise it)."""

_DURATION = re.compile(r"^\s*(\d{1,9})\s*([smhd])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")
RESERVED_NAMES = frozenset({"master"})
_MAX_KNOWN = 100_000


def database_down(error: BaseException) -> bool:
    """Whether ``error`` is the database being unreachable or failing (not a bad query)."""
    from sqlalchemy.exc import InterfaceError, OperationalError

    return isinstance(error, (OperationalError, InterfaceError, OSError, TimeoutError))


def database_url(config: Config) -> str:
    """The gateway's database: ``[gateway] database``, else the call log's ``[log] database``, else the default."""
    from llmplex.store.database import default_url

    return reveal(config.gateway.database or config.log.database) or default_url()


def parse_duration(text: str, option: str = "duration") -> int:
    """Seconds in ``90s``, ``15m``, ``12h`` or ``30d``; ``LLMConfigurationError`` saying the form otherwise."""
    match = _DURATION.match(text) if isinstance(text, str) else None
    if match is None or int(match.group(1)) == 0:
        raise LLMConfigurationError(
            f"{option} {text!r} is not a duration: write a whole number above 0 and a unit, "
            "s (seconds), m (minutes), h (hours) or d (days), e.g. 90s, 12h, 30d"
        )
    return int(match.group(1)) * _UNITS[match.group(2)]


def parse_money(value: str | float | Decimal, option: str = "budget") -> Decimal:
    """US dollars (``12.5``) as a ``Decimal`` at or above 0; ``LLMConfigurationError`` otherwise."""
    try:
        amount = Decimal(str(value).strip())
    except InvalidOperation:
        amount = Decimal("NaN")
    if not amount.is_finite() or amount < 0 or amount > Decimal(10) ** 9:
        raise LLMConfigurationError(f"{option} {value!r} is not an amount of US dollars: write e.g. 25 or 12.50")
    return amount


def hash_key(key: str) -> str:
    """The sha256 hex digest under which a key is stored and looked up."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _limit(value: int | None, option: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10**12):
        raise LLMConfigurationError(f"{option} must be a whole number of at least 1, got {value!r}")
    return value


def _patterns(models: Sequence[str]) -> tuple[str, ...]:
    found = tuple(dict.fromkeys(m.strip() for m in models if m.strip()))
    for pattern in found:
        if len(pattern) > 255 or any(c.isspace() for c in pattern):
            raise LLMConfigurationError(
                f"model pattern {pattern[:60]!r} is not valid: write e.g. openai:* or mock:echo"
            )
    return found


@dataclass(frozen=True)
class KeyRecord:
    """One virtual key as stored (never the key itself): its caps, the models it may use, when it ends.

    ``key_id`` (the start of the key's hash) names its counters in the limits storage. ``team`` is fixed when
    the key is made: keys of one team may continue each other's provider-side state (response ids).
    """

    name: str
    created_at: datetime
    key_id: str = ""
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    budget_usd: Decimal | None = None
    budget_period_seconds: int | None = None
    rpm: int | None = None
    tpm: int | None = None
    max_parallel: int | None = None
    models: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    team: str | None = None

    def status(self, now: datetime | None = None) -> str:
        """``active``, ``revoked`` or ``expired`` (the clock read only for a key that expires)."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= (now or _now()):
            return "expired"
        return "active"

    def allows(self, model_spec: str) -> bool:
        """Whether ``model_spec`` (``prefix:model`` as routed) matches one of the key's patterns (any when none)."""
        return not self.models or any(fnmatchcase(model_spec, pattern) for pattern in self.models)

    def window_start(self, now: datetime | None = None) -> datetime:
        """When the budget's current period began (its creation for a budget without a period)."""
        now = now or _now()
        if not self.budget_period_seconds:
            return self.created_at
        elapsed = max(0.0, (now - self.created_at).total_seconds())
        periods = int(elapsed // self.budget_period_seconds)
        return self.created_at + timedelta(seconds=periods * self.budget_period_seconds)

    def as_json(self) -> dict[str, Any]:
        """The record as JSON data (times in ISO 8601 UTC, money as a string)."""
        return {
            "name": self.name,
            "status": self.status(),
            "created_at": _iso(self.created_at),
            "expires_at": _iso(self.expires_at),
            "revoked_at": _iso(self.revoked_at),
            "budget_usd": None if self.budget_usd is None else str(self.budget_usd),
            "budget_period_seconds": self.budget_period_seconds,
            "rpm": self.rpm,
            "tpm": self.tpm,
            "max_parallel": self.max_parallel,
            "models": list(self.models),
            "metadata": dict(self.metadata),
            "team": self.team,
        }


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.replace(tzinfo=UTC).isoformat()


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None, microsecond=0)


_SETTABLE = ("expires_at", "budget_usd", "budget_period_seconds", "rpm", "tpm", "max_parallel", "models", "metadata")


class KeyStore:
    """The virtual keys of one database (``sqlite:///PATH`` or ``postgresql://...``), migrated on open."""

    def __init__(self, url: str) -> None:
        from llmplex.masking.values import redact
        from llmplex.store.database import open_database, sync_engine

        self.url = url
        try:
            self.engine = open_database(url, writer=True)
        except LLMConfigurationError:
            raise
        except Exception as exc:
            why = (redact(str(getattr(exc, "orig", None) or exc)).splitlines() or [""])[0][:200]
            raise LLMConfigurationError(
                f"the gateway's database {redact(url)} cannot be opened ({type(exc).__name__}: {why}); "
                "start it, or set [gateway] database to a reachable sqlite:///PATH or postgresql://... URL"
            ) from None
        self.reader = sync_engine(url)  # reads never wait for another process's write lock (SQLite WAL)
        self._known: dict[str, KeyRecord] = {}  # by hash: what answers while the database is down

    def __repr__(self) -> str:
        from llmplex.masking.values import redact

        return f"KeyStore({redact(self.url)!r})"

    def create(
        self,
        name: str,
        *,
        budget_usd: Decimal | None = None,
        budget_period_seconds: int | None = None,
        rpm: int | None = None,
        tpm: int | None = None,
        max_parallel: int | None = None,
        models: Sequence[str] = (),
        expires_in_seconds: int | None = None,
        metadata: Mapping[str, Any] | None = None,
        team: str | None = None,
    ) -> tuple[str, KeyRecord]:
        """A new key named ``name`` (in ``team``, if given): the key (shown this once) and its record."""
        from sqlalchemy import insert
        from sqlalchemy.exc import IntegrityError

        from llmplex.store.schema import virtual_keys

        if not isinstance(name, str) or not _NAME.match(name) or name in RESERVED_NAMES:
            raise LLMConfigurationError(
                f"key name {str(name)[:60]!r} is not valid: use 1-128 letters, digits, '.', '_', '@' or '-' "
                f"(not {', '.join(sorted(RESERVED_NAMES))})"
            )
        if budget_period_seconds is not None and budget_usd is None:
            raise LLMConfigurationError("--budget-period needs --budget-usd (the amount each period may spend)")
        if team is not None and (not isinstance(team, str) or not _NAME.match(team)):
            raise LLMConfigurationError(
                f"team name {str(team)[:60]!r} is not valid: use 1-128 letters, digits, '.', '_', '@' or '-'"
            )
        now = _now()
        record = KeyRecord(
            name=name,
            created_at=now,
            expires_at=None if expires_in_seconds is None else now + timedelta(seconds=expires_in_seconds),
            budget_usd=budget_usd,
            budget_period_seconds=_limit(budget_period_seconds, "budget period"),
            rpm=_limit(rpm, "rpm"),
            tpm=_limit(tpm, "tpm"),
            max_parallel=_limit(max_parallel, "max_parallel"),
            models=_patterns(models),
            metadata=dict(metadata or {}),
            team=team,
        )
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        digest = hash_key(key)
        record = replace(record, key_id=digest[:16])
        row = {**_row(record), "name": name, "key_hash": digest, "created_at": now, "team": team}
        try:
            with self.engine.begin() as connection:
                connection.execute(insert(virtual_keys), [row])
        except IntegrityError:
            raise LLMConfigurationError(
                f"a key named {name!r} exists already: pick another name, or change it with `llmplex keys update`"
            ) from None
        return key, record

    def list(self) -> list[KeyRecord]:
        """Every key, oldest first."""
        from sqlalchemy import select

        from llmplex.store.schema import virtual_keys

        with self.reader.connect() as connection:
            rows = connection.execute(select(virtual_keys).order_by(virtual_keys.c.id)).mappings().all()
        return [_record(row) for row in rows]

    def get(self, name: str) -> KeyRecord:
        """The key named ``name``; ``LLMConfigurationError`` when there is none."""
        found = self._one("name", name)
        if found is None:
            raise LLMConfigurationError(f"no key is named {name!r}: `llmplex keys list` shows the keys")
        return found

    def find(self, key: str) -> KeyRecord | None:
        """The record of ``key`` (looked up by its hash), or ``None``.

        While the database cannot be read, a key found before is answered as it was last read (a
        revocation made meanwhile shows once the database is back); a key never found is a 503.
        """
        digest = hash_key(key)
        try:
            found = self._one("key_hash", digest)
        except Exception as exc:
            if not database_down(exc):
                raise
            if digest in self._known:
                return self._known[digest]
            raise GatewayError(
                503,
                "the gateway's database does not answer, so this key cannot be checked; retry shortly",
                retry_after=5,
                kind="database",
            ) from None
        if found is not None:
            if len(self._known) >= _MAX_KNOWN and digest not in self._known:
                self._known.clear()
            self._known[digest] = found
        return found

    def _one(self, column: str, value: str) -> KeyRecord | None:
        from sqlalchemy import select

        from llmplex.store.schema import virtual_keys

        with self.reader.connect() as connection:
            row = connection.execute(select(virtual_keys).where(virtual_keys.c[column] == value)).mappings().first()
        return None if row is None else _record(row)

    def update(self, name: str, **changes: Any) -> KeyRecord:
        """Change ``name``'s caps, models, expiry or metadata (``_SETTABLE``); ``None`` clears a cap."""
        unknown = set(changes) - set(_SETTABLE)
        if unknown:
            raise LLMConfigurationError(f"a key's {', '.join(sorted(unknown))} cannot be changed")
        current = self.get(name)
        if "models" in changes:
            changes["models"] = _patterns(changes["models"] or ())
        for option in ("rpm", "tpm", "max_parallel", "budget_period_seconds"):
            if option in changes:
                _limit(changes[option], option)
        updated = replace(current, **changes)
        if updated.budget_period_seconds is not None and updated.budget_usd is None:
            raise LLMConfigurationError("a budget period needs a budget: give --budget-usd too")
        self._set(name, _row(updated))
        return updated

    def revoke(self, name: str) -> KeyRecord:
        """Revoke ``name`` for good (its spend stays in the log); revoking twice keeps the first time."""
        current = self.get(name)
        if current.revoked_at is not None:
            return current
        revoked = replace(current, revoked_at=_now())
        self._set(name, {"revoked_at": revoked.revoked_at})
        return revoked

    def _set(self, name: str, values: Mapping[str, Any]) -> None:
        from sqlalchemy import update

        from llmplex.store.schema import virtual_keys

        with self.engine.begin() as connection:
            connection.execute(update(virtual_keys).where(virtual_keys.c.name == name).values(**values))

    def close(self) -> None:
        """Close the database connections."""
        self.engine.dispose()
        self.reader.dispose()


def _row(record: KeyRecord) -> dict[str, Any]:
    return {
        "expires_at": record.expires_at,
        "budget_usd": record.budget_usd,
        "budget_period_seconds": record.budget_period_seconds,
        "rpm": record.rpm,
        "tpm": record.tpm,
        "max_parallel": record.max_parallel,
        "models": list(record.models),
        "metadata": dict(record.metadata),
    }


def _plain(amount: Decimal) -> Decimal:
    """``amount`` without trailing zeros, never in exponent form (``10``, not ``1E+1``)."""
    return amount.quantize(Decimal(1)) if amount == amount.to_integral_value() else amount.normalize()


def _record(row: Any) -> KeyRecord:
    budget = row["budget_usd"]
    return KeyRecord(
        name=row["name"],
        created_at=row["created_at"],
        key_id=row["key_hash"][:16],
        expires_at=row["expires_at"],
        revoked_at=row["revoked_at"],
        budget_usd=None if budget is None else _plain(Decimal(budget)),
        budget_period_seconds=row["budget_period_seconds"],
        rpm=row["rpm"],
        tpm=row["tpm"],
        max_parallel=row["max_parallel"],
        models=tuple(row["models"] or ()),
        metadata=dict(row["metadata"] or {}),
        team=row["team"],
    )
