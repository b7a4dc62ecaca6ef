"""Everything a request shows the outside: events and ``llmplex`` log records."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from llmplex.events import Event
from llmplex.hookspecs import hookimpl

__all__ = ["Observed"]


class Observed(logging.Handler):
    """An event observer plugin and a log handler in one: pass it to ``Client(plugins=[...])``."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.events: list[Event] = []
        self.records: list[logging.LogRecord] = []

    @hookimpl
    def llmplex_event(self, event: Event) -> None:
        """Keep every event."""
        self.events.append(event)

    def emit(self, record: logging.LogRecord) -> None:
        """Keep every log record."""
        self.records.append(record)

    @contextmanager
    def capturing_logs(self) -> Iterator[Observed]:
        """Record every ``llmplex`` log record, down to DEBUG, while the block runs."""
        logger = logging.getLogger("llmplex")
        previous = logger.level
        logger.addHandler(self)
        logger.setLevel(logging.DEBUG)
        try:
            yield self
        finally:
            logger.removeHandler(self)
            logger.setLevel(previous)

    def texts(self) -> list[str]:
        """Every event and log record as text, to search for what must not be there."""
        shown: list[Any] = [repr(e) for e in self.events]
        for record in self.records:
            shown += [record.getMessage(), repr(getattr(record, "llmplex", None))]
        return [str(s) for s in shown]
