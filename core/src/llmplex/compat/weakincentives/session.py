"""weakincentives' ``Session`` (``SessionProtocol``): typed state slices fed by reducers and by telemetry.

Every ``PromptRendered``, ``PromptExecuted`` and ``ToolInvoked`` on the session's
dispatcher lands in its slice, so after an evaluation
``session[PromptExecuted].latest().result.output`` is the answer; a structured
output (or each item of an array output) and each tool result's dataclass value
land in the slice of their own type.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar, runtime_checkable
from uuid import UUID, uuid4

from llmplex.compat.weakincentives.errors import InvalidValueError
from llmplex.compat.weakincentives.events import (
    DispatchResult,
    InProcessDispatcher,
    PromptExecuted,
    PromptRendered,
    ToolInvoked,
)
from llmplex.compat.weakincentives.slices import SliceAccessor, SliceView, Snapshot, append_all, apply

__all__ = ["Session", "SessionProtocol"]

logger = logging.getLogger("llmplex.compat.weakincentives")

T = TypeVar("T")
_LOGS = (PromptRendered, PromptExecuted, ToolInvoked)


@runtime_checkable
class SessionProtocol(Protocol):
    """What adapters need of a session (weakincentives' ``SessionProtocol``, v0.18)."""

    @property
    def dispatcher(self) -> Any:
        """The telemetry dispatcher."""

    def __getitem__(self, slice_type: type[T]) -> Any:
        """The slice accessor of ``slice_type``."""

    def install(self, slice_type: type[T], *, initial: Callable[[], T] | None = None) -> None:
        """Declare a slice."""

    def dispatch(self, event: Any) -> Any:
        """Reduce and publish ``event``."""

    def reset(self) -> None:
        """Empty every slice."""

    def snapshot(self, *, tag: str | None = None) -> Any:
        """The slices now."""

    def restore(self, snapshot: Any, *, preserve_logs: bool = True) -> None:
        """Bring slices back."""

    @property
    def parent(self) -> Any:
        """The parent session."""

    @property
    def children(self) -> tuple[Any, ...]:
        """Child sessions."""

    @property
    def tags(self) -> Mapping[str, str]:
        """String tags."""


def _is_instance_dataclass(value: object) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


class Session:
    """Session state and telemetry: ``session[Type].latest()``, ``session.dispatch(event)``,
    ``session.dispatcher.subscribe(PromptExecuted, handler)``.

    ``bus`` is any dispatcher with ``subscribe`` / ``unsubscribe`` / ``dispatch``
    (default: a fresh ``InProcessDispatcher``). ``slice_config`` is accepted for
    weakincentives' signature: slices here are always in memory.
    """

    def __init__(
        self,
        *,
        bus: Any = None,
        parent: Session | None = None,
        session_id: UUID | None = None,
        created_at: datetime | None = None,
        tags: Mapping[object, object] | None = None,
        slice_config: Any = None,
    ) -> None:
        created = created_at if created_at is not None else datetime.now(UTC)
        if created.tzinfo is None:
            raise InvalidValueError("Session created_at must be timezone-aware (e.g. datetime.now(UTC))")
        if parent is not None and parent is self:
            raise InvalidValueError("Session cannot be its own parent.")
        self.session_id: UUID = session_id if session_id is not None else uuid4()
        self.created_at = created.astimezone(UTC)
        self._bus = bus if bus is not None else InProcessDispatcher()
        self._parent = parent
        self._children: list[Session] = []
        self._tags = {str(k): str(v) for k, v in (tags or {}).items()}
        self._tags.setdefault("session_id", str(self.session_id))
        self._slices: dict[type[Any], tuple[Any, ...]] = {}
        self._reducers: dict[type[Any], list[tuple[type[Any], Callable[..., Any]]]] = {}
        self._lock = threading.RLock()
        if parent is not None:
            parent._children.append(self)
            self._tags.setdefault("parent_session_id", str(parent.session_id))
        for kind in _LOGS:
            self._bus.subscribe(kind, self._on_telemetry)

    def __repr__(self) -> str:
        return f"Session(session_id={self.session_id})"

    # -- SessionProtocol -----------------------------------------------------------

    @property
    def dispatcher(self) -> Any:
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

    def __getitem__(self, slice_type: type[T]) -> SliceAccessor[T]:
        """The slice of ``slice_type``: ``all()``, ``latest()``, ``where()``, ``seed()``, ``register()`` ..."""
        return SliceAccessor(self, slice_type)

    def install(self, slice_type: type[T], *, initial: Callable[[], T] | None = None) -> None:
        """Declare the slice of ``slice_type``, seeded with ``initial()`` when it is empty."""
        with self._lock:
            self._slices.setdefault(slice_type, ())
            if initial is not None and not self._slices[slice_type]:
                self._slices[slice_type] = (initial(),)

    def dispatch(self, event: Any) -> DispatchResult:
        """Run the reducers registered for ``type(event)`` (default: append it to its slice), then publish it."""
        self._reduce(type(event), event)
        result: DispatchResult = self._bus.dispatch(event)
        return result

    def reset(self) -> None:
        """Empty every slice; reducer registrations stay."""
        with self._lock:
            self._slices = {kind: () for kind in self._slices}

    def snapshot(self, *, tag: str | None = None, **_: Any) -> Snapshot:
        """The slices as they are now (``restore`` brings them back)."""
        with self._lock:
            return Snapshot(slices=dict(self._slices), tag=tag)

    def restore(self, snapshot: Snapshot, *, preserve_logs: bool = True) -> None:
        """Put the slices back as ``snapshot`` had them; telemetry logs stay unless ``preserve_logs=False``."""
        with self._lock:
            for kind in set(self._slices) | set(snapshot.slices):
                if preserve_logs and kind in _LOGS:
                    continue
                self._slices[kind] = snapshot.slices.get(kind, ())

    # -- what SliceAccessor calls ------------------------------------------------------

    def items(self, slice_type: type[Any]) -> tuple[Any, ...]:
        """The items of one slice."""
        with self._lock:
            return self._slices.get(slice_type, ())

    def set_items(self, slice_type: type[Any], items: tuple[Any, ...]) -> None:
        """Replace the items of one slice."""
        with self._lock:
            self._slices[slice_type] = items

    def register(self, slice_type: type[Any], data_type: type[Any], reducer: Callable[..., Any]) -> None:
        """Run ``reducer`` on ``slice_type``'s slice for each ``data_type`` event."""
        with self._lock:
            self._reducers.setdefault(data_type, []).append((slice_type, reducer))
            self._slices.setdefault(slice_type, ())

    # -- reducing ----------------------------------------------------------------------

    def _reduce(self, data_type: type[Any], event: Any) -> None:
        with self._lock:
            registrations = list(self._reducers.get(data_type, ())) or [(data_type, append_all)]
        for slice_type, reducer in registrations:
            try:
                with self._lock:
                    view = SliceView(self._slices.get(slice_type, ()))
                    self._slices[slice_type] = apply(view.all(), reducer(view, event, context=self))
            except Exception as error:
                logger.warning(
                    "reducer %s failed on %s: %s: %s",
                    getattr(reducer, "__qualname__", repr(reducer)),
                    data_type.__qualname__,
                    type(error).__name__,
                    error,
                )

    def _on_telemetry(self, event: Any) -> None:
        self._reduce(type(event), event)
        if isinstance(event, ToolInvoked):
            value = getattr(event.result, "value", None)
            if _is_instance_dataclass(value):
                self._reduce(type(value), value)
        elif isinstance(event, PromptExecuted):
            output = getattr(event.result, "output", None)
            items = output if isinstance(output, (list, tuple)) else [output]
            for item in items:
                if _is_instance_dataclass(item):
                    self._reduce(type(item), item)
