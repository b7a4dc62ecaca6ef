"""weakincentives' session state: typed slices, the reducers that change them, and snapshots.

``session[Plan].latest()``, ``session[Plan].register(AddStep, reducer)``; a
reducer is ``reducer(view, event, *, context)`` and returns a slice operation
(``Append``, ``Extend``, ``Replace``, ``Clear``) or the new values as a tuple.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

__all__ = [
    "Append",
    "Clear",
    "Extend",
    "Replace",
    "SliceAccessor",
    "SliceView",
    "Snapshot",
    "append_all",
    "replace_latest",
]

T = TypeVar("T")
Reducer = Callable[..., Any]


@dataclass(frozen=True)
class Append(Generic[T]):
    """Add ``item`` at the end of the slice."""

    item: T


@dataclass(frozen=True)
class Extend(Generic[T]):
    """Add ``items`` at the end of the slice."""

    items: tuple[T, ...]


@dataclass(frozen=True)
class Replace(Generic[T]):
    """Make the slice exactly ``items``."""

    items: tuple[T, ...]


@dataclass(frozen=True)
class Clear:
    """Remove the items ``predicate`` selects (all of them without one)."""

    predicate: Callable[[Any], bool] | None = None


@dataclass(frozen=True)
class Snapshot:
    """The slices of a session at one moment (``session.snapshot()``), for ``session.restore``."""

    slices: dict[type[Any], tuple[Any, ...]]
    tag: str | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))


class SliceView(Generic[T]):
    """A read-only view of one slice, as reducers receive it."""

    def __init__(self, items: tuple[T, ...]) -> None:
        self._items = items

    def __iter__(self) -> Iterator[T]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def all(self) -> tuple[T, ...]:
        """Every item, oldest first."""
        return self._items

    def latest(self) -> T | None:
        """The newest item, or ``None``."""
        return self._items[-1] if self._items else None

    def where(self, predicate: Callable[[T], bool]) -> tuple[T, ...]:
        """The items ``predicate`` accepts."""
        return tuple(item for item in self._items if predicate(item))


def append_all(view: SliceView[T], event: T, *, context: Any = None) -> Append[T]:
    """The default reducer: keep every event (a ledger)."""
    return Append(event)


def replace_latest(view: SliceView[T], event: T, *, context: Any = None) -> Replace[T]:
    """Keep only the newest event."""
    return Replace((event,))


def apply(items: tuple[Any, ...], operation: Any) -> tuple[Any, ...]:
    """The slice after ``operation``: a slice operation (this module's or weakincentives' own, read by
    name), or the new items as an iterable."""
    kind = type(operation).__name__
    if kind == "Append":
        return (*items, operation.item)
    if kind == "Extend":
        return (*items, *operation.items)
    if kind == "Replace":
        return tuple(operation.items)
    if kind == "Clear":
        keep = operation.predicate
        return () if keep is None else tuple(item for item in items if not keep(item))
    if isinstance(operation, Iterable) and not isinstance(operation, (str, bytes)):
        return tuple(operation)
    raise TypeError(f"a reducer must return Append, Extend, Replace, Clear or a tuple, got {operation!r}")


class SliceAccessor(Generic[T]):
    """``session[Type]``: query and change the slice of one type."""

    def __init__(self, store: Any, slice_type: type[T]) -> None:
        self._store = store
        self._type = slice_type

    def all(self) -> tuple[T, ...]:
        """Every item, oldest first."""
        items: tuple[T, ...] = self._store.items(self._type)
        return items

    def latest(self) -> T | None:
        """The newest item, or ``None``."""
        items = self.all()
        return items[-1] if items else None

    def where(self, predicate: Callable[[T], bool]) -> tuple[T, ...]:
        """The items ``predicate`` accepts."""
        return tuple(item for item in self.all() if predicate(item))

    def seed(self, values: T | Iterable[T]) -> None:
        """Set the slice to ``values`` (one item or several), bypassing reducers."""
        single = isinstance(values, self._type) or not isinstance(values, Iterable)
        self._store.set_items(self._type, (values,) if single else tuple(values))  # type: ignore[arg-type]

    def clear(self, predicate: Callable[[T], bool] | None = None) -> None:
        """Remove the items ``predicate`` selects (all without one)."""
        self._store.set_items(self._type, apply(self.all(), Clear(predicate)))

    def append(self, value: T) -> None:
        """Add ``value`` at the end, bypassing reducers."""
        self._store.set_items(self._type, (*self.all(), value))

    def register(self, data_type: type[Any], reducer: Reducer) -> None:
        """Run ``reducer(view, event, *, context)`` on this slice for each dispatched ``data_type``."""
        self._store.register(self._type, data_type, reducer)
