"""weakincentives' ``Session``, as much of it as ``evaluate`` needs: an id and an event dispatcher."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from uuid import UUID, uuid4

from llmplex.compat.weakincentives.errors import InvalidValueError
from llmplex.compat.weakincentives.events import InProcessDispatcher

__all__ = ["Session"]


class Session:
    """Where an evaluation publishes its telemetry: ``session.dispatcher.subscribe(PromptExecuted, handler)``.

    ``bus`` is any dispatcher with ``subscribe`` / ``unsubscribe`` / ``dispatch``
    (default: a fresh ``InProcessDispatcher``).
    """

    def __init__(
        self,
        *,
        bus: InProcessDispatcher | None = None,
        parent: Session | None = None,
        session_id: UUID | None = None,
        created_at: datetime | None = None,
        tags: Mapping[object, object] | None = None,
    ) -> None:
        created = created_at if created_at is not None else datetime.now(UTC)
        if created.tzinfo is None:
            raise InvalidValueError("Session created_at must be timezone-aware (e.g. datetime.now(UTC))")
        self.session_id: UUID = session_id if session_id is not None else uuid4()
        self.created_at = created.astimezone(UTC)
        self._bus = bus if bus is not None else InProcessDispatcher()
        self._parent = parent
        self._children: list[Session] = []
        self._tags = {str(k): str(v) for k, v in (tags or {}).items()}
        self._tags.setdefault("session_id", str(self.session_id))
        if parent is not None:
            parent._children.append(self)
            self._tags.setdefault("parent_session_id", str(parent.session_id))

    def __repr__(self) -> str:
        return f"Session(session_id={self.session_id})"

    @property
    def dispatcher(self) -> InProcessDispatcher:
        """The dispatcher events of this session go through."""
        return self._bus

    @property
    def parent(self) -> Session | None:
        """The session this one was created under, if any."""
        return self._parent

    @property
    def children(self) -> tuple[Session, ...]:
        """Sessions created with this one as ``parent``."""
        return tuple(self._children)

    @property
    def tags(self) -> Mapping[str, str]:
        """String tags, including ``session_id``."""
        return dict(self._tags)
