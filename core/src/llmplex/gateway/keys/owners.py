"""Who owns each id the gateway hands out that names state kept at a provider (response ids today).

Provider-side state (a stored response that a next turn continues with
``previous_response_id``) belongs to the key that made it. The gateway records
the owner (key name and team) of every such id in its database, in the
``response_owners`` table, before the answer carrying the id is sent, so every
replica sees it. A request naming an id that another key made, or that this
gateway never handed out, gets a 404 in its API's shape and nothing is sent
upstream. Keys made in the same team (``llmplex keys create --team NAME``) may
continue each other's state.

Owners this process has read or written are kept in memory (a bounded map) so
a conversation's next turn costs no database read. While the database is down,
ids handed out meanwhile are kept there (this process answers for them) and
written with its next Responses request once the database answers; an id this
process does not know then gets a 503 (``Retry-After``), not a 404.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from llmplex.gateway.errors import GatewayError
from llmplex.gateway.keys.access import Caller
from llmplex.gateway.keys.store import database_down

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = ["Owner", "ResponseOwners", "owner_of"]

log = logging.getLogger("llmplex.gateway")

_KEPT = 100_000
"""Owners kept in memory (the oldest are forgotten first; the database still has them)."""


class Owner(NamedTuple):
    """The key an id was handed to, and that key's team."""

    key_name: str
    team: str | None

    def allows(self, other: Owner) -> bool:
        """Whether ``other`` may use state this owner made: the same key, or a key of the same team."""
        return other.key_name == self.key_name or (self.team is not None and other.team == self.team)


def owner_of(caller: Caller) -> Owner:
    """The owner ``caller`` stands for (its key's team when it holds a virtual key)."""
    record: Any = getattr(caller, "record", None)
    return Owner(caller.name, getattr(record, "team", None))


def not_found(response_id: str) -> GatewayError:
    """The 404 of an id the caller may not use; it says no more than an id that does not exist would."""
    shown = response_id[:80]
    return GatewayError(
        404,
        f"Previous response with id {shown!r} not found.",
        param="previous_response_id",
        code="previous_response_not_found",
        kind="not_found",
    )


class ResponseOwners:
    """The owners of provider-side ids in the database ``engine`` writes (``reader`` reads)."""

    def __init__(self, engine: Engine, reader: Engine | None = None) -> None:
        self.engine = engine
        self.reader = reader or engine
        self._known: OrderedDict[str, Owner] = OrderedDict()
        self._unwritten: dict[str, Owner] = {}

    def __repr__(self) -> str:
        return f"ResponseOwners(known={len(self._known)}, unwritten={len(self._unwritten)})"

    def _keep(self, response_id: str, owner: Owner) -> None:
        self._known[response_id] = owner
        self._known.move_to_end(response_id)
        while len(self._known) > _KEPT:
            self._known.popitem(last=False)

    # -- on a worker thread --------------------------------------------------------------

    def _write(self, rows: dict[str, Owner]) -> None:
        from sqlalchemy import insert, select

        from llmplex.store.schema import response_owners

        with self.engine.begin() as connection:
            present = set(
                connection.execute(
                    select(response_owners.c.response_id).where(response_owners.c.response_id.in_(list(rows)))
                ).scalars()
            )
            new = [
                {"response_id": rid, "key_name": o.key_name, "team": o.team, "created_at": _now()}
                for rid, o in rows.items()
                if rid not in present
            ]
            if new:
                connection.execute(insert(response_owners), new)

    def _read(self, response_id: str) -> Owner | None:
        from sqlalchemy import select

        from llmplex.store.schema import response_owners

        with self.reader.connect() as connection:
            row = connection.execute(
                select(response_owners.c.key_name, response_owners.c.team).where(
                    response_owners.c.response_id == response_id
                )
            ).first()
        return None if row is None else Owner(row[0], row[1])

    # -- on the event loop ---------------------------------------------------------------

    async def remember(self, caller: Caller, response_id: str) -> None:
        """Record that ``response_id`` was handed to ``caller`` (before the answer naming it is sent)."""
        owner = owner_of(caller)
        known = self._known.get(response_id)
        if known is not None and known == owner:
            return
        self._keep(response_id, owner)
        self._unwritten[response_id] = owner
        await self._flush()

    async def _flush(self) -> None:
        rows, self._unwritten = self._unwritten, {}
        if not rows:
            return
        try:
            await asyncio.to_thread(self._write, rows)
        except Exception as exc:
            self._unwritten = {**rows, **self._unwritten}  # written once the database answers again
            log.warning("response owners not written yet (%d): %s", len(self._unwritten), type(exc).__name__)

    async def check(self, caller: Caller, response_id: str) -> None:
        """Let ``caller`` continue ``response_id``, or raise a 404 (another key's, or never handed out)."""
        owner = self._known.get(response_id)
        if owner is None:
            try:
                await self._flush()
                owner = await asyncio.to_thread(self._read, response_id)
            except Exception as exc:
                if not database_down(exc):
                    raise
                raise GatewayError(
                    503,
                    "the gateway's database does not answer, so who owns this previous_response_id cannot be "
                    "checked; retry shortly",
                    retry_after=5,
                    kind="database",
                ) from None
            if owner is None:
                raise not_found(response_id)
            self._keep(response_id, owner)
        if not owner.allows(owner_of(caller)):
            raise not_found(response_id)


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None, microsecond=0)
